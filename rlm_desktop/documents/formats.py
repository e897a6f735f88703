"""Which files we read, as what, and which we refuse — decided from the file name alone.

Content sniffing (binary bytes, encodings) happens later, in `decoding`; this module opens no file.
A single compressed file (`app.log.1.gz`, `report.pdf.xz`) is judged by its name without the
compression suffix, and decompressed by the bounded reader (`inflate`); archives that hold
several files (`.tar.gz`, `.zip`) are refused.
"""

from __future__ import annotations

from pathlib import Path

DOCUMENT_TYPES = (
    "text", "markdown", "rst", "pdf", "docx", "spreadsheet", "slides", "odt", "epub", "rtf",
    "email", "image", "html", "csv", "json", "code",
)  # fmt: skip
"""Every value `Document.type` can take."""

_TYPE_BY_SUFFIX: dict[str, str] = {
    **dict.fromkeys((".txt", ".text", ".log", ".out", ".err", ".nfo"), "text"),
    **dict.fromkeys((".ini", ".cfg", ".conf", ".toml", ".yaml", ".yml"), "text"),
    **dict.fromkeys((".xml", ".tex", ".bib", ".srt", ".vtt", ".properties"), "text"),
    **dict.fromkeys((".md", ".markdown", ".mdown", ".mkd"), "markdown"),
    ".rst": "rst",
    ".pdf": "pdf",
    ".docx": "docx",
    **dict.fromkeys((".xlsx", ".xlsm", ".xls", ".ods"), "spreadsheet"),
    **dict.fromkeys((".pptx", ".odp"), "slides"),
    ".odt": "odt",
    ".epub": "epub",
    ".rtf": "rtf",
    **dict.fromkeys((".eml", ".mbox", ".mbx", ".msg"), "email"),
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp"), "image"),
    **dict.fromkeys((".html", ".htm", ".xhtml"), "html"),
    **dict.fromkeys((".csv", ".tsv", ".tab"), "csv"),
    **dict.fromkeys((".json", ".jsonl", ".ndjson", ".geojson", ".ipynb"), "json"),
    **dict.fromkeys(
        (
            ".py",
            ".pyi",
            ".ipy",
            ".js",
            ".mjs",
            ".cjs",
            ".jsx",
            ".ts",
            ".tsx",
            ".java",
            ".kt",
            ".kts",
            ".scala",
            ".groovy",
            ".c",
            ".h",
            ".cc",
            ".cpp",
            ".cxx",
            ".hpp",
            ".hh",
            ".cs",
            ".go",
            ".rs",
            ".rb",
            ".php",
            ".swift",
            ".m",
            ".mm",
            ".r",
            ".jl",
            ".lua",
            ".pl",
            ".pm",
            ".hs",
            ".ml",
            ".mli",
            ".ex",
            ".exs",
            ".erl",
            ".clj",
            ".cljs",
            ".dart",
            ".f90",
            ".f",
            ".sh",
            ".bash",
            ".zsh",
            ".fish",
            ".ps1",
            ".bat",
            ".cmd",
            ".sql",
            ".vue",
            ".svelte",
            ".css",
            ".scss",
            ".sass",
            ".less",
            ".proto",
            ".graphql",
            ".gradle",
            ".cmake",
            ".nix",
            ".tf",
            ".hcl",
            ".zig",
            ".nim",
            ".v",
            ".sv",
            ".vhd",
            ".asm",
            ".s",
        ),
        "code",
    ),
}

_TYPE_BY_NAME: dict[str, str] = {
    **dict.fromkeys(
        (
            "makefile",
            "dockerfile",
            "containerfile",
            "cmakelists.txt",
            "rakefile",
            "gemfile",
            "justfile",
            "vagrantfile",
            "jenkinsfile",
            "procfile",
        ),
        "code",
    ),
    **dict.fromkeys(
        (
            "readme",
            "license",
            "licence",
            "copying",
            "changelog",
            "authors",
            "notice",
            "todo",
            "contributing",
        ),
        "text",
    ),
}

_ARCHIVE = "compressed archive"
_BINARY_KINDS: dict[str, tuple[str, ...]] = {
    "image": (
        ".gif",
        ".ico",
        ".icns",
        ".heic",
        ".psd",
        ".svg",
        ".eps",
        ".raw",
        ".cr2",
        ".nef",
    ),
    "audio": (".mp3", ".wav", ".flac", ".ogg", ".m4a", ".aac", ".wma", ".opus", ".mid"),
    "video": (".mp4", ".mkv", ".mov", ".avi", ".wmv", ".webm", ".flv", ".m4v"),
    _ARCHIVE: (
        ".zip",
        ".tgz",
        ".tbz",
        ".tbz2",
        ".txz",
        ".tlz",
        ".zst",
        ".7z",
        ".rar",
        ".tar",
        ".lz4",
        ".jar",
        ".war",
        ".whl",
        ".egg",
        ".apk",
        ".deb",
        ".rpm",
        ".dmg",
        ".iso",
        ".img",
        ".msi",
        ".cab",
    ),
    "program or library": (
        ".exe",
        ".dll",
        ".so",
        ".dylib",
        ".o",
        ".obj",
        ".a",
        ".lib",
        ".bin",
        ".wasm",
        ".pyc",
        ".pyo",
        ".pyd",
        ".class",
        ".elc",
        ".beam",
        ".node",
    ),
    "font": (".ttf", ".otf", ".woff", ".woff2", ".eot"),
    "database or data blob": (
        ".sqlite",
        ".sqlite3",
        ".db",
        ".mdb",
        ".accdb",
        ".parquet",
        ".feather",
        ".arrow",
        ".h5",
        ".hdf5",
        ".npy",
        ".npz",
        ".pkl",
        ".pickle",
        ".pt",
        ".onnx",
        ".safetensors",
        ".gguf",
        ".dat",
    ),
}
_BINARY_ADVICE = {
    "image": "save it as .png or .jpg to have its text recognised",
    "audio": "load a transcript instead",
    "video": "load a transcript instead",
    _ARCHIVE: "extract it and load the folder",
    "program or library": "load its source code instead",
    "font": "fonts hold no document text",
    "database or data blob": "export the data to CSV or JSON and load that",
}
_BINARY_KIND_BY_SUFFIX = {s: kind for kind, suffixes in _BINARY_KINDS.items() for s in suffixes}

_UNSUPPORTED: dict[str, str] = {
    **dict.fromkeys((".doc", ".pages", ".wpd"), "save it as .docx or PDF"),
    ".numbers": "export each sheet to CSV",
    **dict.fromkeys((".ppt", ".key"), "save it as .pptx or export it to PDF"),
    **dict.fromkeys((".mobi", ".azw3", ".djvu"), "convert it to EPUB, PDF or text"),
    ".pst": "export the messages to an .mbox file",
}

_GENERATED_NAMES = frozenset(
    (
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "cargo.lock",
        "composer.lock",
        "gemfile.lock",
        "go.sum",
        "packages.lock.json",
        "flake.lock",
    )
)
_GENERATED_SUFFIXES = (".min.js", ".min.css", ".js.map", ".css.map", ".map")


COMPRESSIONS: dict[str, str] = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".lzma": "lzma"}
"""The compressions a single file may come in, by suffix, each read as the file inside it."""


def compression(path: Path) -> str | None:
    """The compression of a single compressed file (`gzip` for `app.log.1.gz`), or None."""
    return COMPRESSIONS.get(path.suffix.lower())


def _inside(path: Path) -> Path:
    """The name of the file a single compressed file holds (`app.log.1` for `app.log.1.gz`);
    any other name as it is."""
    return path.with_suffix("") if compression(path) is not None else path


def type_for(path: Path) -> str | None:
    """The document type for this name, or None when only the content can tell (then: text).

    A compressed file has the type of the file inside it.
    """
    path = _inside(path)
    name = path.name.lower()
    if name in _TYPE_BY_NAME:
        return _TYPE_BY_NAME[name]
    return _TYPE_BY_SUFFIX.get(path.suffix.lower())


def document_patterns() -> tuple[str, ...]:
    """Name patterns (`*.txt`, `*.md`, ...) of the files read as documents, for file pickers,
    and those of any file compressed on its own (`*.gz`: a rotated log, a man page)."""
    return tuple(f"*{suffix}" for suffix in [*_TYPE_BY_SUFFIX, *COMPRESSIONS])


def refusal(path: Path) -> str | None:
    """Why a file of this name cannot be loaded at all (binary or unsupported format), or None."""
    if compression(path) is not None:
        return _compressed_refusal(path)
    suffix = path.suffix.lower()
    if suffix in _UNSUPPORTED:
        return f"{suffix} files are not supported; {_UNSUPPORTED[suffix]} and load that"
    kind = _BINARY_KIND_BY_SUFFIX.get(suffix)
    if kind is not None:
        return f"{kind} file ({suffix}), not a text document; {_BINARY_ADVICE[kind]}"
    return None


def _compressed_refusal(path: Path) -> str | None:
    """Why a single compressed file cannot be loaded: it holds an archive, is compressed twice,
    or the file inside it is refused by its own name."""
    inner = _inside(path)
    suffixes = f"{inner.suffix}{path.suffix}".lower()
    if compression(inner) is not None:
        return f"compressed twice ({suffixes}); decompress it once and load the {inner.suffix} file"
    if _BINARY_KIND_BY_SUFFIX.get(inner.suffix.lower()) == _ARCHIVE:
        return f"{_ARCHIVE} file ({suffixes}), not a text document; {_BINARY_ADVICE[_ARCHIVE]}"
    return refusal(inner)


def generated(path: Path) -> str | None:
    """Why a file found in a folder is machine-generated noise (lock file, minified), or None."""
    name = _inside(path).name.lower()
    if name in _GENERATED_NAMES:
        return "generated lock file"
    if name.endswith(_GENERATED_SUFFIXES):
        return "minified or source-map file"
    return None
