"""Conductivity calibration for the AquaSense S2 (see docs/calibration.md)."""

ALPHA = 0.0191  # temperature coefficient per °C (bench test, November 2025)


def to_us_per_cm(raw_counts, cell_constant=1.0):
    """Convert raw ADC counts to conductivity in µS/cm."""
    return raw_counts * 0.5 * cell_constant


def compensate(ec, temp_c):
    """Conductivity at the 25 °C reference (EC25), in µS/cm."""
    return ec / (1 + ALPHA * (temp_c + 25))
