"""The REPL worker: runs model-written code in its own process, one per RLM call.

Standard library only, started by path with `python -I -S`, so nothing of the application is
imported here. One launcher process per run forks a worker for each RLM call; each worker speaks
length-prefixed JSON frames with the parent over its own socket (stdin/stdout are /dev/null, so
stray writes by model code cannot corrupt the protocol). `llm_query`/`rlm_query` are proxied to the
parent with request ids, so they work from threads too.
"""

from __future__ import annotations

import ast
import io
import itertools
import json
import linecache
import os
import queue
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from typing import Any

HEADER = struct.Struct(">I")
OUTPUT_CAP = int(os.environ.get("RLM_WORKER_OUTPUT_CAP", "1000000"))


class SubCallError(Exception):
    """Base of sub-call errors. For batched calls, `results` holds the answers that did arrive."""

    def __init__(self, message: str, results: list[Any] | None = None) -> None:
        super().__init__(message)
        self.results = results


class BudgetExceededError(SubCallError):
    """The run's budget does not allow this sub-call."""


class LLMCallError(SubCallError):
    """A sub-LLM call failed."""


class RLMChildError(LLMCallError):
    """A recursive child RLM call failed instead of answering."""


ERRORS = {cls.__name__: cls for cls in (BudgetExceededError, LLMCallError, RLMChildError)}


class Channel:
    """Framed JSON over the two protocol pipes; `send` is safe from any thread."""

    def __init__(self, reader: Any, writer: Any) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
        with self._lock:
            self._writer.write(HEADER.pack(len(data)) + data)
            self._writer.flush()

    def receive(self) -> dict[str, Any] | None:
        header = self._reader.read(HEADER.size)
        if len(header) < HEADER.size:
            return None
        (length,) = HEADER.unpack(header)
        result: dict[str, Any] = json.loads(self._reader.read(length))
        return result


class CappedBuffer(io.TextIOBase):
    """A text sink that keeps the first `OUTPUT_CAP` characters and counts the rest."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._size = 0
        self.dropped = 0
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            room = OUTPUT_CAP - self._size
            if room > 0:
                self._parts.append(text[:room])
                self._size += min(len(text), room)
            self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def getvalue(self) -> str:
        text = "".join(self._parts)
        if self.dropped:
            text += f"\n[... {self.dropped:,} more characters not kept ...]"
        return text


class Proxy:
    """Sends sub-call requests to the parent and waits for their results."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._lock = threading.Lock()

    def call(self, op: str, **arguments: Any) -> Any:
        request_id = next(self._ids)
        done = threading.Event()
        slot: list[dict[str, Any]] = []
        with self._lock:
            self._pending[request_id] = (done, slot)
        try:
            self._channel.send({"type": "call", "id": request_id, "op": op, "args": arguments})
            done.wait()
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        reply = slot[0]
        if reply.get("ok"):
            return reply.get("value")
        error_class = ERRORS.get(reply.get("error_type", ""), LLMCallError)
        raise error_class(reply.get("message", "sub-call failed"), reply.get("results"))

    def resolve(self, message: dict[str, Any]) -> None:
        with self._lock:
            entry = self._pending.get(message.get("id", -1))
        if entry is not None:
            entry[1].append(message)
            entry[0].set()


class Repl:
    """The namespace the model's code runs in, and the final-answer signals it can raise."""

    def __init__(self, proxy: Proxy, context: Any, meta: list[dict[str, Any]]) -> None:
        self.proxy = proxy
        self.final: str | None = None
        self.final_source: str | None = None
        self.namespace: dict[str, Any] = {"__name__": "__repl__", "__builtins__": __builtins__}
        self.namespace.update(
            context=context,
            context_meta=meta,
            answer={"content": "", "ready": False},
            llm_query=self.llm_query,
            llm_query_batched=self.llm_query_batched,
            rlm_query=self.rlm_query,
            rlm_query_batched=self.rlm_query_batched,
            FINAL=self.final_value,
            FINAL_VAR=self.final_var,
            SHOW_VARS=self.show_vars,
            **ERRORS,
        )
        self._builtin_names = set(self.namespace)

    def llm_query(self, prompt: Any, model: str | None = None) -> str:
        """One sub-LLM call; returns its reply text."""
        return str(self.proxy.call("llm_query", prompt=str(prompt), model=model))

    def llm_query_batched(self, prompts: Any, model: str | None = None) -> list[str]:
        """Concurrent sub-LLM calls; replies in input order."""
        return list(
            self.proxy.call("llm_query_batched", prompts=[str(p) for p in prompts], model=model)
        )

    def rlm_query(self, prompt: Any, context: Any = None, model: str | None = None) -> str:
        """A recursive child RLM with its own REPL; its `context` defaults to the prompt."""
        return str(
            self.proxy.call(
                "rlm_query", prompt=str(prompt), context=_portable(context), model=model
            )
        )

    def rlm_query_batched(
        self, prompts: Any, contexts: Any = None, model: str | None = None
    ) -> list[str]:
        """Concurrent child RLM calls; answers in input order."""
        prompts = [str(p) for p in prompts]
        ctx = [None] * len(prompts) if contexts is None else [_portable(c) for c in contexts]
        if len(ctx) != len(prompts):
            raise ValueError(f"rlm_query_batched: {len(prompts)} prompts but {len(ctx)} contexts")
        return list(
            self.proxy.call("rlm_query_batched", prompts=prompts, contexts=ctx, model=model)
        )

    def final_value(self, value: Any) -> str:
        """Submit `str(value)` as the answer; the run ends after this cell."""
        self.final, self.final_source = str(value), "FINAL"
        return self.final

    def final_var(self, name: Any) -> str:
        """Submit the value of the REPL variable `name`."""
        if not isinstance(name, str):
            return self.final_value(name)
        key = name.strip().strip("'\"")
        if key not in self.namespace or key in self._builtin_names - {"answer", "context"}:
            raise NameError(
                f"FINAL_VAR({name!r}): no variable named {key!r} in the REPL; "
                f"assign it first (e.g. {key} = ...) or call FINAL(value)"
            )
        self.final, self.final_source = str(self.namespace[key]), "FINAL_VAR"
        return self.final

    def show_vars(self) -> dict[str, str]:
        """The user variables and their types."""
        hidden = self._builtin_names | {"__name__", "__builtins__"}
        return {k: type(v).__name__ for k, v in self.namespace.items() if k not in hidden}

    def partial_answer(self) -> str | None:
        """`answer["content"]` when the model has started filling it in."""
        answer = self.namespace.get("answer")
        content = answer.get("content") if isinstance(answer, dict) else None
        return str(content) if content else None

    def check_answer_dict(self) -> None:
        answer = self.namespace.get("answer")
        if self.final is None and isinstance(answer, dict) and answer.get("ready"):
            self.final, self.final_source = str(answer.get("content", "")), "answer"


def _portable(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    return str(value)


class Interrupted(BaseException):
    """Raised in the main thread by SIGINT from the parent (cell timeout)."""


def _on_sigint(signum: int, frame: Any) -> None:
    raise Interrupted()


def run_cell(repl: Repl, code: str, index: int) -> dict[str, Any]:
    """Execute one code block; the value of a trailing expression is printed, as in a REPL."""
    out, err = CappedBuffer(), CappedBuffer()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    error: str | None = None
    interrupted = False
    started = time.perf_counter()
    filename = f"<cell {index}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        tree = ast.parse(code, filename=filename, mode="exec")
        last = tree.body[-1] if tree.body else None
        tail = tree.body.pop() if isinstance(last, ast.Expr) else None
        exec(compile(tree, filename, "exec"), repl.namespace)
        if isinstance(tail, ast.Expr):
            value = eval(compile(ast.Expression(tail.value), filename, "eval"), repl.namespace)
            if value is not None and repl.final is None:
                print(repr(value))
    except Interrupted:
        interrupted = True
        error = "TimeoutError: the cell was interrupted because it ran past the cell time limit"
    except BaseException as exc:
        error = _format_error(exc)
    finally:
        sys.stdout, sys.stderr = saved
    repl.check_answer_dict()
    return {
        "partial": repl.partial_answer(),
        "type": "cell_result",
        "stdout": out.getvalue(),
        "stderr": err.getvalue(),
        "error": error,
        "interrupted": interrupted,
        "duration_s": time.perf_counter() - started,
        "final": repl.final,
        "final_source": repl.final_source,
    }


def _format_error(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    frames = traceback.extract_tb(exc.__traceback__)
    cell_frames = [f for f in frames if f.filename.startswith("<cell")]
    lines = ["Traceback (most recent call last):"]
    lines += [line.rstrip() for line in traceback.format_list(cell_frames or frames[-1:])]
    lines += [s.rstrip() for s in traceback.format_exception_only(type(exc), exc)]
    return "\n".join(lines)


def _apply_limits(memory_limit_mb: int | None) -> None:
    if memory_limit_mb:
        try:
            import resource

            limit = memory_limit_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass


def serve(channel: Channel) -> None:
    """Serve one RLM call: receive the context, then execute cells until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    init = channel.receive()
    if init is None:
        return
    _apply_limits(init.get("memory_limit_mb"))
    sys.path.extend(p for p in init.get("sys_path", []) if p not in sys.path)
    proxy = Proxy(channel)
    repl = Repl(proxy, init["context"], init.get("meta", []))
    del init
    cells: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read_loop() -> None:
        while True:
            message = channel.receive()
            if message is None or message.get("type") == "shutdown":
                cells.put(None)
                return
            if message.get("type") == "result":
                proxy.resolve(message)
            elif message.get("type") == "exec":
                cells.put(message)

    threading.Thread(target=read_loop, name="protocol-reader", daemon=True).start()
    channel.send({"type": "ready", "pid": os.getpid()})
    while True:
        request = cells.get()
        if request is None:
            break
        signal.signal(signal.SIGINT, _on_sigint)
        try:
            result = run_cell(repl, request["code"], request.get("index", 0))
        except Interrupted:
            result = {
                "type": "cell_result",
                "error": "TimeoutError: interrupted",
                "interrupted": True,
            }
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        result["id"] = request.get("id")
        channel.send(result)


def _become_worker(request: dict[str, Any], data: socket.socket) -> Channel:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    cwd = request["cwd"]
    os.makedirs(os.path.join(cwd, "tmp"), exist_ok=True)
    os.chdir(cwd)
    os.environ["HOME"] = cwd
    os.environ["TMPDIR"] = os.path.join(cwd, "tmp")
    reader = data.makefile("rb", buffering=1 << 20)
    writer = data.makefile("wb", buffering=1 << 16)
    return Channel(reader, writer)


def launcher(control: socket.socket) -> None:
    """Fork a worker per request, handing each the socket the parent sent along.

    Forking this warm, single-threaded process costs about a millisecond, where starting a fresh
    interpreter costs tens: it is what lets 64 child RLM calls start at once.
    """
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(control, 65536, 1)
        except OSError:
            return
        if not message or not fds:
            return
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                serve(_become_worker(request, socket.socket(fileno=fds[0])))
            finally:
                os._exit(0)
        os.close(fds[0])
        control.send(json.dumps({"pid": pid}).encode())


def main() -> None:
    """`worker.py --launcher FD`: serve spawn requests on the control socket FD."""
    if len(sys.argv) != 3 or sys.argv[1] != "--launcher":
        sys.exit("usage: worker.py --launcher FD (started by RLM Desktop, not by hand)")
    launcher(socket.socket(fileno=int(sys.argv[2])))


if __name__ == "__main__":
    main()
