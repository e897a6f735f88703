"""Trajectories from files made elsewhere, kept as saved sessions: our own JSONL export, the
official library's `RLMLogger` log (`rlms`) and DSPy RLM trajectories. Qt-free.

`import_trajectory(store, path)` reads one file (`detect`, then its format's reader into a
neutral `trajectory`), turns it into the engine events its run would have emitted (`to_events`)
and has the store's own writer keep them in one transaction (`into_store`): an imported session
is then read by every view as a local one is.
"""

from rlm_desktop.importing.into_store import Imported, ImportRefused, import_trajectory
from rlm_desktop.importing.reading import MAX_BYTES

__all__ = ["MAX_BYTES", "ImportRefused", "Imported", "import_trajectory"]
