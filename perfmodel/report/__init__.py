"""Reports built from profiles: diagnosis data, terminal rendering, exports."""
