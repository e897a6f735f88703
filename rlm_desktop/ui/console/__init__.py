"""The console: each turn's prose, highlighted code and output."""
