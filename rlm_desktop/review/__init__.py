"""Qt-free views of a run built from its events: the call tree, and what a run means."""
