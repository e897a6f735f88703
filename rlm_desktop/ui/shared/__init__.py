"""What several parts of the window are built from: small widgets, window-wide actions, a pacer
for display work, and the typed settings file (`Preferences`)."""
