"""The run's timeline (waterfall): every call a bar on a shared time axis."""
