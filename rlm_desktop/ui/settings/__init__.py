"""The settings dialog: providers and keys, run defaults, prompt profiles, appearance."""
