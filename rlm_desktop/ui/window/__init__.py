"""The main window: its pages (welcome, workspace), menus and shortcuts, the workspace that lays
out every pane, and what the window remembers of its layout."""
