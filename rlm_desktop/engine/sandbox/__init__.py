"""Where model code runs: two backends behind one REPL interface.

The engine asks a launcher for a worker (connection.py) and speaks the worker protocol with it
(process.py), unaware of which backend serves it (choice.py picks): `kernel/`, the OS's own
confinement around real CPython, and `wasm/`, a WebAssembly Python in a portable host process.
What they share is written once here: the worker's REPL (worker/, run by both), the channel's
host side and its checks (process.py), the scratch quota (scratch_quota.py), the environment
(environment.py), the report of what isolates what (level.py) and the app's handling of files
model code could have written (untrusted_files.py).
"""
