"""Review panes of a run's meaning: its health (findings and document coverage)."""
