"""Everything Qt: the main window, its panes and dialogs, and the bridge to engine events.

Nothing here is imported by the engine, the store or the document loaders. Start the GUI with
`rlm_desktop.ui.app.main()`.
"""
