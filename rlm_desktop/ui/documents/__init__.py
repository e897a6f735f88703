"""The documents pane and its item model."""
