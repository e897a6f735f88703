"""Everything Qt, one folder per part of the window.

```text
app.py        the entry point: the QApplication, the qasync loop inside Qt's, the main window
window/       the main window: main_window.py (pages, menus, shortcuts, starting and reviewing
              runs), workspace.py (every pane of a run laid out and fed), layout_memory.py
              (what the window remembers of its layout), welcome.py (the first-run page)
run/          starting, following and ending a run: controls.py, model_picker.py, budget.py,
              endpoint.py, checks.py (pre-flight), starter.py, controller.py, answer_panel.py,
              status_bar.py
tree/         the live call tree: model.py, columns.py, pinned.py, search_filter.py, panel.py,
              details.py (the selected call)
console/      each turn's prose, code and output: view.py, blocks.py, highlighter.py (pygments)
documents/    the documents pane: pane.py, model.py, coverage.py, skipped.py
timeline/     the waterfall of calls: pane.py, view.py
review/       panes of a run's meaning: health_panel.py (findings and coverage)
replay/       a saved run played through the live views: bar.py, controller.py, actions.py
sessions/     the session browser: dialog.py, snippet.py (search hits), export_target.py
dashboard/    the history of all runs: dialog.py, filters.py, histogram.py, tables.py
compare/      two saved runs side by side: dialog.py, side.py
evaluation/   the evaluation page: dialog.py, form.py, memory.py (its fields kept), past.py,
              results.py, plot.py
settings/     the settings dialog: dialog.py, providers.py, sandbox.py, profiles.py
appearance/   how it looks: theme.py (light and dark palettes, colours, fonts, icons)
shared/       what several parts are built from: widgets.py, indexes.py (the item index type),
              actions.py (window-wide actions), pacer.py (display work at most once an interval),
              preferences.py (the settings file)
bridge/       where other threads meet Qt's: events.py (engine events in batches),
              main_thread_gc.py (garbage collected on Qt's thread only)
```

Nothing here is imported by the engine, the store or the document loaders, and no two folders
import each other in a circle. Start the GUI with `rlm_desktop.ui.app.main()`.
"""
