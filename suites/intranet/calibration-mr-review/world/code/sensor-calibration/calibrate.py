"""Conductivity calibration for the AquaSense S2 (see docs/calibration.md)."""


def to_us_per_cm(raw_counts, cell_constant=1.0):
    """Convert raw ADC counts to conductivity in µS/cm."""
    return raw_counts * 0.5 * cell_constant
