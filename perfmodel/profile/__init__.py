"""Reading raw traces (event logs, JFR recordings, py-spy samples) into plain records."""
