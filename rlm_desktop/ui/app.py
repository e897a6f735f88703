"""Start-up: a QApplication, the qasync loop inside Qt's, and the main window, painted fast.

Nothing heavy is imported before the window is on screen: litellm (seconds) and the model list are
loaded after the first paint. `RLM_DESKTOP_EXIT_AFTER_PAINT=1` prints `first-paint <epoch
seconds>` at the first paint and quits (the start-up benchmark uses it).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

PAINT_PROBE_ENV = "RLM_DESKTOP_EXIT_AFTER_PAINT"
DESKTOP_ID = "io.github.rlm_desktop.RLMDesktop"


def create_application(argv: list[str] | None = None) -> object:
    """The QApplication (made once), named and themed from the saved preferences."""
    from PySide6.QtWidgets import QApplication

    from rlm_desktop.ui.appearance.theme import apply_fonts, apply_theme, icon
    from rlm_desktop.ui.shared.preferences import Preferences

    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("RLM Desktop")
    app.setOrganizationName("rlm-desktop")
    app.setDesktopFileName(DESKTOP_ID)
    app.setWindowIcon(icon("rlm-desktop"))
    prefs = Preferences()
    apply_theme(app, prefs.theme)
    apply_fonts(
        app,
        prefs.get_str("appearance/ui_font"),
        prefs.get_int("appearance/ui_font_size"),
        prefs.get_str("appearance/code_font"),
        prefs.get_int("appearance/code_font_size"),
    )
    return app


def qt_probe() -> int:
    """Start a QGuiApplication and name its platform plugin (`--qt-probe`, run by the self-check's check_qt)."""
    from PySide6 import __version__ as pyside_version
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication([sys.argv[0]])
    print(f"plugin {app.platformName()} (PySide6 {pyside_version})")
    return 0


def main() -> int:
    """Open the GUI and run until the window closes; the process exit code."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import qasync
    from PySide6.QtCore import QTimer

    from rlm_desktop.ui.bridge.main_thread_gc import MainThreadGarbageCollector
    from rlm_desktop.ui.window.crash_guard import CrashGuard
    from rlm_desktop.ui.window.main_window import MainWindow

    app = create_application()
    collector = MainThreadGarbageCollector()
    collector.start()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    probe = bool(os.environ.get(PAINT_PROBE_ENV))
    window = MainWindow(warm_up=not probe)
    CrashGuard(window).install(loop)
    if probe:

        def report() -> None:
            heavy = ",".join(
                m
                for m in ("litellm", "openai", "httpx", "aiohttp", "sqlite_utils")
                if m in sys.modules
            )
            print(f"first-paint {time.time():.6f} heavy={heavy or '-'}", flush=True)
            QTimer.singleShot(0, window.close)

        window.first_painted.connect(report)
    window.show()
    with loop:
        loop.run_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
