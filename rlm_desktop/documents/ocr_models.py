"""The PP-OCR models, loaded into onnxruntime as RapidOCR 1.4.4 loads them.

The models (PP-OCRv4's detector and recogniser) and the recogniser's characters ship in the
`rapidocr-onnxruntime` wheel; only its files are used. Importing the package itself would import
OpenCV, which the app does not ship, so its folder is found without running it.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGE = "rapidocr_onnxruntime"
DETECTOR = "models/ch_PP-OCRv4_det_infer.onnx"
RECOGNISER = "models/ch_PP-OCRv4_rec_infer.onnx"


class ModelsMissing(RuntimeError):
    """The OCR models are not where the `rapidocr-onnxruntime` package keeps them."""


@dataclass(frozen=True)
class Model:
    """One onnxruntime session and the names of its input and outputs."""

    session: Any
    input: str
    outputs: list[str]

    def run(self, batch: Any) -> Any:
        """The model's first output for `batch` (float32, batch first)."""
        return self.session.run(self.outputs, {self.input: batch})[0]


@dataclass(frozen=True)
class Models:
    """The detector, the recogniser and the recogniser's characters (index 0 is CTC's blank)."""

    detector: Model
    recogniser: Model
    characters: list[str]


def folder() -> Path:
    """Where the `rapidocr_onnxruntime` package's files are, installed or in a frozen bundle."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / PACKAGE


def load(threads: int) -> Models:
    """Both models, each run with `threads` threads (RapidOCR's session settings)."""
    base = folder()
    paths = [base / DETECTOR, base / RECOGNISER]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise ModelsMissing(
            f"OCR's models are missing ({', '.join(missing)}); reinstall rapidocr-onnxruntime"
        )
    detector, recogniser = (_model(path, threads) for path in paths)
    meta = recogniser.session.get_modelmeta().custom_metadata_map
    if "character" not in meta:
        raise ModelsMissing(f"OCR's recogniser {paths[1]} names no characters; reinstall it")
    characters = ["blank", *meta["character"].splitlines(), " "]
    return Models(detector, recogniser, characters)


def _model(path: Path, threads: int) -> Model:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    options.enable_cpu_mem_arena = False
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(path),
        sess_options=options,
        providers=[("CPUExecutionProvider", {"arena_extend_strategy": "kSameAsRequested"})],
    )
    return Model(session, session.get_inputs()[0].name, [out.name for out in session.get_outputs()])
