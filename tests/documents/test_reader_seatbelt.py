"""The document reader's Seatbelt profile on macOS (read as SBPL here, where it cannot apply):
the REPL's policy with nothing to write, so a parser taken over by a file writes nothing."""

from __future__ import annotations

from pathlib import Path

from rlm_desktop.documents.reader_sandbox import reader_folders
from rlm_desktop.engine.sandbox.kernel import seatbelt
from tests.engine.test_seatbelt import allowed, operations, read_sbpl


def test_the_reader_writes_only_dev_null_reads_its_code_and_reaches_no_network() -> None:
    folders = reader_folders()
    forms = read_sbpl(seatbelt.seatbelt_profile({"read": folders}))

    assert ["deny", "default"] in forms
    assert allowed(forms, "file-write*") == [("literal", "/dev/null")]
    readable = {path for _, path in allowed(forms, "file-read*")}
    assert set(folders) <= readable
    home = str(Path.home())
    assert all(not home.startswith(path + "/") and path != home for path in folders)
    assert not {op for op in operations(forms, "allow") if op.startswith("network")}
