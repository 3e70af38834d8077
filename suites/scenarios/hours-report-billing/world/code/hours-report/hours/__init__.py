"""Meridian hours: reports from timesheet exports."""
