"""Data shipped with the package: the prediction intervals' calibration (intervals.json,
written by `perfmodel experiment calibrate`)."""
