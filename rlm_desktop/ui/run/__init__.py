"""Starting, following and ending a run: the controls, the controller, the answer and the status bar."""
