"""The REPL worker: runs model-written code in its own process, one per RLM call.

Standard library only, started by path with `python -I -S worker/__main__.py`, so nothing of the
application is imported here; `__main__.py` loads this folder as the package `rlm_worker`, by path
(`-I` leaves the script's folder off sys.path, and model code shares the worker's sys.path). One
launcher process per run (launch.py) forks a worker for each RLM call; each worker serves its call
(serve.py), speaking length-prefixed JSON frames with the parent over its own socket (channel.py;
stdin/stdout are /dev/null, so stray writes by model code cannot corrupt the protocol). The model's
namespace and tools are repl.py; `llm_query`/`rlm_query` are proxied to the parent with request ids
(proxy.py), so they work from threads too. A cell runs in cells.py, its variables are read back in
variables.py, and a question's variables are kept for its follow-up in state.py.
"""
