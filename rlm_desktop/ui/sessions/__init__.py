"""The session browser: search, open, export and delete saved runs."""
