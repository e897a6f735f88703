"""Replay of a saved session through the live views: the control bar and what drives it."""
