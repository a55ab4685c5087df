"""The run store: measured runs of experiments, kept for reports and for calibration."""
