"""The live call tree: its item model, the panel with its tools, and the selected call's details."""
