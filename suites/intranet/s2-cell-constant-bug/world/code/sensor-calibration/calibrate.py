"""Conductivity calibration for the AquaSense S2 (see docs/calibration.md)."""

ALPHA = 0.0191  # temperature coefficient per °C (bench test, November 2025)

# Cell constant K of the S2 conductivity probe, in 1/cm.
# Placeholder until the bench measurement of the production probe is in (docs/calibration.md).
CELL_CONSTANT = 1.0


def to_us_per_cm(raw_counts, cell_constant=CELL_CONSTANT):
    """Convert raw ADC counts to conductivity in µS/cm."""
    return raw_counts * 0.5 * cell_constant


def compensate(ec, temp_c):
    """Conductivity at the 25 °C reference (EC25), in µS/cm."""
    return ec / (1 + ALPHA * (temp_c - 25))
