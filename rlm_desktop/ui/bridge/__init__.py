"""Where other threads meet Qt's: engine events delivered to the window in batches, and Python's
garbage collector kept on Qt's thread."""
