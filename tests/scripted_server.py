"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 that litellm really talks to.

Tests script replies in order (`enqueue`) or by content (`respond_with`), put them behind a chat
template that refuses what Gemma's refuses (`templated`), and can add latency, HTTP errors and
`Retry-After` headers, inflate the usage it reports, echo the key it was sent in an error body,
stream a reply as server-sent events (recording what it wrote before the client hung up), or
stream a reply of any size (written piece by piece, never built in memory). It runs in a
background thread, so it serves the test process, qasync loops and CLI subprocesses alike. As a
local server it can also answer its own routes (`routes`: llama.cpp's `/props`, Ollama's
`/api/show`, ...), serve its API only under `/v1` (`v1_only`), or be `busy`: take connections
and answer nothing, as llama-cpp-python while it generates.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted response. `status` other than 200 sends an OpenAI-style error body."""

    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    usage_factor: float = 1.0
    """Multiplies the usage reported (as a provider that counts more tokens than the app does)."""
    echo_key: bool = False
    """An error reply ends its message with the `Authorization` header it was sent."""
    body_bytes: int = 0
    """When set, a 200 reply whose content is this many bytes of `a`, streamed in 1 MB pieces."""
    chunked: bool = False
    """Send a `body_bytes` reply without its length (chunked), so only reading it tells its size."""
    page: str | None = None
    """When set, this HTML with `status` instead of a chat completion or an error body (a web page
    at the address, a proxy's error page)."""
    hang_up: bool = False
    """Close the connection without replying."""
    stream: bool = True
    """Stream the reply (server-sent events) when the request asks for a stream; False answers
    a stream request with a plain reply, as a server that cannot stream does."""
    chunk_chars: int = 16
    """Characters of the content in each streamed chunk."""
    chunk_delay_s: float = 0.0
    """Pause before each streamed chunk (a model writing)."""
    stall_after_chars: int | None = None
    """Go silent for `stall_s` once this many characters were streamed (a stuck server)."""
    stall_s: float = 0.0
    usage_in_stream: bool = True
    """Send the usage chunk a stream request asks for (`stream_options.include_usage`)."""


HUGE_PIECE = 1024 * 1024
BUSY_LIMIT_S = 60.0
"""How long a busy server holds a request at most (it is let go at once when the server stops)."""


@dataclass(frozen=True)
class Garbage:
    """A route's answer of `size` bytes that are not JSON, streamed in 1 MB pieces."""

    size: int


class _Server(ThreadingHTTPServer):
    """A threading server with a listen backlog deep enough for hundreds of concurrent clients."""

    request_queue_size = 1024
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (a timeout, a cancelled run) is not an error of the server's."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


Responder = Callable[[dict[str, Any]], "str | Reply"]


def last_user_text(request: dict[str, Any]) -> str:
    """The text of the last user message of a chat request."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content)
            return str(content or "")
    return ""


def system_text(request: dict[str, Any]) -> str:
    """The system prompt of a chat request ("" when there is none)."""
    for message in request.get("messages", []):
        if message.get("role") == "system":
            return str(message.get("content") or "")
    return ""


ROLES_MUST_ALTERNATE = (
    "Conversation roles must alternate user/assistant/user/assistant/... at row 19, column 27:\n"
    " {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n"
    ' {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}'
)
"""llama.cpp's server's message (HTTP 500) when Gemma 3's chat template refuses the messages."""
NO_SYSTEM_ROLE = "System role not supported"
"""What Gemma 2's chat template raises for a system message (HTTP 500 from llama.cpp)."""


def template_refusal(request: dict[str, Any], *, system_role: bool = True) -> Reply | None:
    """What Gemma's official chat template, rendered by llama.cpp, says of `request`: None when it
    takes the messages, else HTTP 500 with llama.cpp's text. Gemma 3's takes a leading system
    message (`system_role`), Gemma 2's refuses it; after it the roles must alternate from a user
    turn."""
    messages = list(request.get("messages", []))
    if messages and messages[0].get("role") == "system":
        if not system_role:
            return Reply(status=500, content=NO_SYSTEM_ROLE)
        messages = messages[1:]
    for index, message in enumerate(messages):
        if (message.get("role") == "user") != (index % 2 == 0):
            return Reply(status=500, content=ROLES_MUST_ALTERNATE)
    return None


def templated(responder: Responder, *, system_role: bool = True) -> Responder:
    """`responder` behind Gemma's chat template (`template_refusal`): what it refuses never reaches
    the responder."""

    def respond(request: dict[str, Any]) -> str | Reply:
        return template_refusal(request, system_role=system_role) or responder(request)

    return respond


def estimate_tokens(text: str) -> int:
    """The server's own usage figure: about four characters a token."""
    return max(1, len(text) // 4)


def completion_response(
    request: dict[str, Any], reply: Reply
) -> tuple[int, dict[str, str], dict[str, Any]]:
    """(status, headers, JSON body) of an OpenAI chat-completion response carrying `reply`."""
    if reply.status != 200:
        body = {"error": {"message": reply.content, "type": "scripted", "code": reply.status}}
        return reply.status, reply.headers, body
    prompt = "".join(str(m.get("content") or "") for m in request.get("messages", []))
    usage_in = reply.prompt_tokens if reply.prompt_tokens is not None else estimate_tokens(prompt)
    usage_out = (
        reply.completion_tokens
        if reply.completion_tokens is not None
        else estimate_tokens(reply.content)
    )
    usage_in = int(usage_in * reply.usage_factor)
    usage_out = int(usage_out * reply.usage_factor)
    body = {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "test-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": usage_in,
            "completion_tokens": usage_out,
            "total_tokens": usage_in + usage_out,
        },
    }
    return 200, reply.headers, body


def sse_body(payload: dict[str, Any]) -> bytes:
    """A chat completion as one server-sent event stream: the content in one chunk, then the
    finish, the usage and `[DONE]`."""
    head = {k: payload[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = payload["choices"][0]
    chunks = [
        {**head, "choices": [{"index": 0, "delta": choice["message"], "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        {**head, "choices": [], "usage": payload["usage"]},
    ]
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return "".join(events).encode()


class ScriptedServer:
    """An OpenAI-compatible `/v1/chat/completions` and `/v1/models` endpoint with scripted replies.

    `models` are listed at `/v1/models`, and at `/api/tags` as Ollama lists its models; with
    `listing_key`, both lists answer 401 unless the request carries `Bearer <listing_key>`.
    """

    def __init__(
        self,
        latency_s: float = 0.0,
        models: tuple[str, ...] = ("test-model",),
        listing_key: str | None = None,
    ) -> None:
        self.latency_s = latency_s
        self.models = models
        self.listing_key = listing_key
        self.routes: dict[str, Any] = {}
        """Extra routes by exact path, answered with this JSON (or `Garbage`) to a GET or POST;
        a `/v1/models` here replaces the listing made of `models`."""
        self.v1_only = False
        """Serve the chat API and the listing only under `/v1`, as llama-cpp-python does."""
        self.busy = False
        """Take every request and answer none (until the server stops)."""
        self.sent: dict[str, int] = {}
        """Bytes of `Garbage` written for each route (a client that stops reading stops it)."""
        self.route_requests: list[tuple[str, Any]] = []
        """(path, JSON body or None) of each request for one of `routes`."""
        self._released = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.peers: list[int] = []
        """The client port each chat request came from (one per connection)."""
        self.streamed_chars: dict[int, int] = {}
        """For each streamed request (by its index in `requests`), the characters of content
        written to the client."""
        self.chunks_sent: dict[int, list[tuple[float, int]]] = {}
        """For each streamed request, when each content chunk was written and flushed
        (`time.perf_counter()`) and the characters sent by then."""
        self.hung_up: set[int] = set()
        """The streamed requests whose client closed the connection before the reply ended."""
        self._queue: deque[str | Reply] = deque()
        self._responder: Responder | None = None
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._httpd = _Server(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def in_flight(self) -> int:
        """Chat requests received and not answered yet (waiting out their latency)."""
        with self._lock:
            return self._in_flight

    @property
    def base_url(self) -> str:
        """The `api_base` to give litellm."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        """The server without a path, as an Ollama base URL is given."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ScriptedServer:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._released.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def enqueue(self, *replies: str | Reply) -> None:
        """Replies handed out in order, before the responder is consulted."""
        with self._lock:
            self._queue.extend(replies)

    def respond_with(self, responder: Responder) -> None:
        """Answer every request the queue does not cover with `responder(request_json)`."""
        self._responder = responder

    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the chat requests received so far."""
        with self._lock:
            return list(self.requests)

    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        if queued is None and self._responder is not None:
            queued = self._responder(request)
        if queued is None:
            return Reply(status=500, content="the scripted server has no reply for this request")
        return Reply(content=queued) if isinstance(queued, str) else queued

    def _reply(self, request: dict[str, Any], authorization: str) -> Reply:
        reply = self._next_reply(request)
        delay = reply.delay_s + self.latency_s
        if delay:
            time.sleep(delay)
        if reply.echo_key:
            reply = dataclasses.replace(reply, content=f"{reply.content} {authorization}")
        return reply

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, headers: dict[str, str], body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _send_page(self, status: int, page: str) -> None:
                data = page.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _held(self) -> bool:
                """Hold the request when the server is busy; True if it was held."""
                if server.busy:
                    server._released.wait(BUSY_LIMIT_S)
                    self.close_connection = True
                return server.busy

            def _not_under_v1(self) -> bool:
                if server.v1_only and not self.path.startswith("/v1/"):
                    self._send(404, {}, {"detail": "Not Found"})
                    return True
                return False

            def _route(self, path: str, body: Any) -> bool:
                """Answer one of `routes`; False when `path` is not one."""
                if path not in server.routes:
                    return False
                with server._lock:
                    server.route_requests.append((path, body))
                answer = server.routes[path]
                if not isinstance(answer, Garbage):
                    self._send(200, {}, answer)
                    return True
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(answer.size))
                self.end_headers()
                piece = b"\x00not json{" * (HUGE_PIECE // 10)
                try:
                    for start in range(0, answer.size, len(piece)):
                        chunk = piece[: min(len(piece), answer.size - start)]
                        self.wfile.write(chunk)
                        server.sent[path] = server.sent.get(path, 0) + len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client stopped reading, as it should
                return True

            def do_GET(self) -> None:
                if self._held() or self._route(self.path, None) or self._not_under_v1():
                    return
                path = self.path.rstrip("/")
                listing = path.endswith("/models") or path == "/api/tags"
                wanted = f"Bearer {server.listing_key}"
                if listing and server.listing_key and self.headers.get("Authorization") != wanted:
                    self._send(401, {}, {"error": {"message": "Incorrect API key provided"}})
                elif path.endswith("/models"):
                    data = [
                        {"id": m, "object": "model", "owned_by": "scripted"} for m in server.models
                    ]
                    self._send(200, {}, {"object": "list", "data": data})
                elif path == "/api/tags":
                    self._send(200, {}, {"models": [{"name": m} for m in server.models]})
                else:
                    self._send(404, {}, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                if self._held() or self._route(self.path, request) or self._not_under_v1():
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {}, {"error": {"message": "not found"}})
                    return
                with server._lock:
                    index = len(server.requests)
                    server.requests.append(request)
                    server.headers.append(dict(self.headers.items()))
                    server.peers.append(self.client_address[1])
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                try:
                    reply = server._reply(request, self.headers.get("Authorization", ""))
                finally:
                    with server._lock:
                        server._in_flight -= 1
                if reply.hang_up:
                    self.close_connection = True
                elif reply.page is not None:
                    self._send_page(reply.status, reply.page)
                elif reply.body_bytes and reply.status == 200:
                    self._stream_huge(reply.body_bytes, reply.chunked)
                elif request.get("stream") and reply.stream and reply.status == 200:
                    self._stream_events(request, reply, index)
                else:
                    self._send(*completion_response(request, reply))

            def _stream_events(self, request: dict[str, Any], reply: Reply, index: int) -> None:
                """The reply as OpenAI's server-sent events, chunk by chunk, noting how much of
                it was written before the client hung up."""
                _status, _headers, body = completion_response(request, reply)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                head = {k: body[k] for k in ("id", "created", "model")}
                head["object"] = "chat.completion.chunk"

                def event(payload: dict[str, Any] | str) -> None:
                    data = payload if isinstance(payload, str) else json.dumps(payload)
                    line = f"data: {data}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                    self.wfile.flush()

                def delta(content: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
                    choice = {"index": 0, "delta": content, "finish_reason": finish}
                    return {**head, "choices": [choice]}

                text = reply.content
                step = max(1, reply.chunk_chars)
                sent = 0
                stalled = False
                server.streamed_chars[index] = 0
                sent_at = server.chunks_sent[index] = []
                try:
                    event(delta({"role": "assistant", "content": ""}))
                    for start in range(0, len(text), step):
                        if reply.chunk_delay_s:
                            time.sleep(reply.chunk_delay_s)
                        stall = reply.stall_after_chars
                        if stall is not None and not stalled and sent >= stall:
                            time.sleep(reply.stall_s)
                            stalled = True
                        piece = text[start : start + step]
                        event(delta({"content": piece}))
                        sent += len(piece)
                        server.streamed_chars[index] = sent
                        sent_at.append((time.perf_counter(), sent))
                    event(delta({}, reply.finish_reason))
                    options = request.get("stream_options") or {}
                    if reply.usage_in_stream and options.get("include_usage"):
                        event({**head, "choices": [], "usage": body["usage"]})
                    event("[DONE]")
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    server.hung_up.add(index)
                    self.close_connection = True

            def _stream_huge(self, size: int, chunked: bool) -> None:
                head = (
                    b'{"id": "chatcmpl-huge", "object": "chat.completion", "created": 0, '
                    b'"model": "test-model", "choices": [{"index": 0, "message": '
                    b'{"role": "assistant", "content": "'
                )
                tail = (
                    b'"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, '
                    b'"completion_tokens": 1, "total_tokens": 2}}'
                )
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(len(head) + size + len(tail)))
                self.end_headers()
                piece = b"a" * HUGE_PIECE

                def write(data: bytes) -> None:
                    if chunked:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    else:
                        self.wfile.write(data)

                try:
                    write(head)
                    for start in range(0, size, HUGE_PIECE):
                        write(piece[: min(HUGE_PIECE, size - start)])
                    write(tail)
                    if chunked:
                        self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client stopped reading, as it should

        return Handler


class ServerProcess:
    """A scripted server in a forked child process, answering with `responder`.

    For benchmarks: an asyncio (aiohttp) server, so the test double spends as little CPU as possible
    and none of it competes with the engine's event loop, as a real, remote provider would not.
    """

    def __init__(self, responder: Responder, latency_s: float = 0.0) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        receiver, sender = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_serve_forever, args=(responder, latency_s, sender), daemon=True
        )
        self._process.start()
        self.base_url: str = receiver.recv()

    def stop(self) -> None:
        """Terminate the server process."""
        self._process.terminate()
        self._process.join(5)


def _serve_forever(responder: Responder, latency_s: float, sender: Any) -> None:
    import asyncio

    from aiohttp import web

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        answer = responder(body)
        reply = Reply(content=answer) if isinstance(answer, str) else answer
        await asyncio.sleep(latency_s + reply.delay_s)
        status, headers, payload = completion_response(body, reply)
        if status == 200 and body.get("stream") and reply.stream:
            return web.Response(
                body=sse_body(payload), headers=headers, content_type="text/event-stream"
            )
        return web.json_response(payload, status=status, headers=headers)

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        sender.send(f"http://127.0.0.1:{port}/v1")
        await asyncio.Event().wait()

    asyncio.run(main())
