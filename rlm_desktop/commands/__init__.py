"""Headless subcommands of `rlm-desktop`, one module per command group."""
