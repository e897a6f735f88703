"""The history dashboard: spreads, breakdowns and tail runs over all saved sessions."""
