"""The wasm sandbox: model code in a WebAssembly Python (a CPython WASI component, guest/ and
build.py) run by wasmtime in a host process the app spawns with pipes (host.py, launcher.py), the
same on Windows, macOS and Linux. Its guest is compiled for the machine once (compiled.py,
prepare.py); what it can hold is bounds.py.
"""
