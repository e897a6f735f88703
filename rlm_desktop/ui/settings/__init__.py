"""The settings dialog: providers and keys, run defaults, the sandbox, prompt profiles,
appearance."""
