"""OTLP traces read back with the official protobuf definitions, and sent to a real receiver."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from rlm_desktop import paths
from rlm_desktop.exports import export, export_bytes, send_traces
from rlm_desktop.exports.otlp import error_type, provider_name, request_model
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.engine.scripting import QUERY
from tests.exports.otlp_receiver import OtlpReceiver
from tests.exports.undecodable_name import SPELLED, run_over_undecodable_name
from tests.scripted_rlm import scripted
from tests.scripted_server import ScriptedServer
from tests.store.real_sessions import SCRIPTS, real_sessions

__all__ = ["real_sessions"]

Sessions = tuple[Store, dict[str, str]]
SHAPES = ("fanout", "depth2", "failed", "timeout", "cancelled")
_IDS = ("traceId", "spanId", "parentSpanId")


def parsed_json(text: str) -> ExportTraceServiceRequest:
    """OTLP/JSON parsed strictly (unknown fields rejected); its hex ids are what OTLP/JSON
    mandates, so they are turned into protobuf JSON's base64 first."""
    document = json.loads(text)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in _IDS:
                    span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(document, ExportTraceServiceRequest(), ignore_unknown_fields=False)


def spans_of(request: ExportTraceServiceRequest) -> list[Span]:
    return [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]


def attrs(span: Span) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for kv in span.attributes:
        kind = kv.value.WhichOneof("value")
        value = getattr(kv.value, kind)
        if kind == "array_value":
            value = [getattr(v, v.WhichOneof("value")) for v in value.values]
        values[kv.key] = value
    return values


def trace(sessions: Sessions, shape: str, **options: Any) -> list[Span]:
    store, ids = sessions
    return spans_of(parsed_json(export(store, ids[shape], "otlp", **options)))


@pytest.mark.parametrize("shape", SHAPES)
def test_every_export_parses_strictly_with_well_formed_ids_and_a_sound_tree(
    real_sessions: Sessions, shape: str
) -> None:
    spans = trace(real_sessions, shape)
    assert spans
    by_id = {span.span_id: span for span in spans}
    assert len(by_id) == len(spans)
    assert {len(span.trace_id) for span in spans} == {16}
    assert {len(span.span_id) for span in spans} == {8}
    roots = [span for span in spans if not span.parent_span_id]
    assert len(roots) == 1
    for span in spans:
        assert span.start_time_unix_nano <= span.end_time_unix_nano
        if span.parent_span_id:
            parent = by_id[span.parent_span_id]  # no orphans
            assert span.start_time_unix_nano >= parent.start_time_unix_nano, span.name


@pytest.mark.parametrize("shape", SHAPES)
def test_chat_spans_follow_the_genai_conventions(real_sessions: Sessions, shape: str) -> None:
    chats = [s for s in trace(real_sessions, shape) if attrs(s)["gen_ai.operation.name"] == "chat"]
    assert chats
    for span in chats:
        a = attrs(span)
        assert a["gen_ai.request.model"] == "test-model"
        assert span.name == "chat test-model"
        assert a["gen_ai.provider.name"] == "openai"
        assert a["server.address"] == "127.0.0.1"
        assert isinstance(a["server.port"], int)
        assert "gen_ai.response.finish_reasons" in a
        assert span.kind == Span.SPAN_KIND_CLIENT
        if span.status.code == Status.STATUS_CODE_ERROR:
            assert "gen_ai.response.model" not in a
            assert a["error.type"]
        else:
            assert span.status.code == Status.STATUS_CODE_UNSET  # success leaves it unset
            assert a["gen_ai.response.model"] == "test-model"


def test_a_failed_request_says_its_http_status(real_sessions: Sessions) -> None:
    failed = [
        s for s in trace(real_sessions, "failed") if s.status.code == Status.STATUS_CODE_ERROR
    ]
    assert failed
    assert {attrs(s)["error.type"] for s in failed} == {"400"}
    assert any("model_not_found" in s.status.message for s in failed)


def test_a_cell_error_names_the_exception_type(real_sessions: Sessions) -> None:
    cells = [s for s in trace(real_sessions, "depth2") if s.name == "execute_tool repl"]
    errors = [attrs(s)["error.type"] for s in cells if s.status.code == Status.STATUS_CODE_ERROR]
    assert errors == ["ZeroDivisionError"]


@pytest.mark.parametrize(("shape", "reason"), [("timeout", "timeout"), ("cancelled", "cancelled")])
def test_code_running_when_the_run_ended_gets_a_span_ended_with_the_run(
    real_sessions: Sessions, shape: str, reason: str
) -> None:
    store, ids = real_sessions
    (ended,) = store.db.conn.execute(
        "SELECT ended_at FROM sessions WHERE id = ?", [ids[shape]]
    ).fetchone()
    spans = trace(real_sessions, shape, include_content=True)
    unfinished = [s for s in spans if attrs(s).get("rlm_desktop.unfinished")]
    assert len(unfinished) == 1
    (cell,) = unfinished
    assert cell.status.code == Status.STATUS_CODE_ERROR
    assert attrs(cell)["error.type"] == reason
    assert "time.sleep(60)" in attrs(cell)["gen_ai.tool.call.arguments"]
    assert cell.end_time_unix_nano == int(ended * 1_000_000_000)


def test_the_protobuf_export_is_the_same_trace(real_sessions: Sessions) -> None:
    store, ids = real_sessions
    from_json = trace(real_sessions, "depth2")
    from_proto = spans_of(
        ExportTraceServiceRequest.FromString(export_bytes(store, ids["depth2"], "otlp-proto"))
    )
    assert sorted(s.span_id for s in from_proto) == sorted(s.span_id for s in from_json)
    for span in from_proto:
        twin = next(s for s in from_json if s.span_id == span.span_id)
        assert (span.parent_span_id, span.name, span.kind) == (
            twin.parent_span_id,
            twin.name,
            twin.kind,
        )
        assert attrs(span) == attrs(twin)
        assert span.status.code == twin.status.code


def test_names_follow_the_conventions_and_the_one_provider_map() -> None:
    assert request_model("anthropic/claude-sonnet-4") == "claude-sonnet-4"
    assert provider_name("anthropic/claude-sonnet-4") == "anthropic"
    assert provider_name("claude-3-haiku") == "anthropic"
    assert provider_name("gemini/gemini-2.5-pro") == "gcp.gemini"
    assert request_model("openrouter/meta/llama-3") == "meta/llama-3"
    assert request_model("my-model") == "my-model"
    assert error_type("HTTP 503: overloaded") == "503"
    assert error_type("Traceback...\nKeyError: 'x'") == "KeyError"
    assert error_type("the run passed its 3 s time limit", "timeout") == "timeout"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    started = OtlpReceiver().start()
    yield started
    started.stop()


def scripted_cli_run(
    tmp_path: Path, server: ScriptedServer, *flags: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`rlm-desktop run --json` over a small ledger against the scripted server, plus `flags`."""
    document = tmp_path / "ledger.txt"
    document.write_text("12 + 30\n" * 200)
    return run_cli(
        "run", "--query", QUERY, "--doc", str(document), "--mode", "rlm",
        "--model", "openai/test-model", "--api-base", server.base_url, "--json", *flags,
        home=tmp_path / "home", env=env,
    )  # fmt: skip


def test_a_run_sends_its_trace_to_the_collector(
    tmp_path: Path, receiver: OtlpReceiver, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(SCRIPTS["fanout"])
    done = scripted_cli_run(tmp_path, scripted_server, "--otlp-endpoint", receiver.endpoint)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["warnings"] == []
    (request,) = receiver.requests
    assert receiver.content_types == ["application/x-protobuf"]
    spans = spans_of(request)
    by_id = {span.span_id: span for span in spans}
    assert all(not s.parent_span_id or s.parent_span_id in by_id for s in spans)
    sub_calls = [
        s for s in spans if s.name == "chat test-model" and "rlm_desktop.turn" not in attrs(s)
    ]
    assert len(sub_calls) == 6
    assert {by_id[s.parent_span_id].name for s in sub_calls} == {"execute_tool repl"}


def test_a_dead_collector_is_one_warning_and_the_run_still_succeeds(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(scripted(root=["```repl\nFINAL('done')\n```"]))
    with socket.socket() as probe:  # a port on which nothing listens
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    done = scripted_cli_run(
        tmp_path, scripted_server, env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "completed"
    assert len(result["warnings"]) == 1
    assert result["warnings"][0].startswith(f"traces not sent to {endpoint}/v1/traces")
    assert done.stderr.count("traces not sent") == 1
    assert "Traceback" not in done.stderr


def test_a_run_over_a_file_name_that_is_not_utf8_sends_its_trace(
    tmp_path: Path, isolated_home: Path, receiver: OtlpReceiver, scripted_server: ScriptedServer
) -> None:
    """A real run over `caf\\xe9.txt` pushes its trace when it ends, and the same session sent
    with its content (`send_traces(include_content=True)`) reaches the collector whole: the
    SDK's encoder once logged a traceback and left `gen_ai.input.messages` out."""
    done = run_over_undecodable_name(
        scripted_server, tmp_path, isolated_home, "--otlp-endpoint", receiver.endpoint
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["warnings"] == []
    assert "Traceback" not in done.stderr
    store = Store(paths.database_path())
    try:
        sent = send_traces(store, json.loads(done.stdout)["session_id"], receiver.endpoint, True)
    finally:
        store.close()

    assert sent is None
    pushed, with_content = receiver.requests
    assert len(spans_of(pushed)) == len(spans_of(with_content)) == 5
    chats = [attrs(s) for s in spans_of(with_content) if s.name == "chat test-model"]
    assert len(chats) == 2
    for chat in chats:
        _system, first, *_rest = json.loads(chat["gen_ai.input.messages"])
        assert SPELLED in first["parts"][0]["content"]


def test_sessions_export_writes_protobuf(tmp_path: Path, real_sessions: Sessions) -> None:
    store, ids = real_sessions
    out = tmp_path / "trace.pb"
    home = Path(store.db.conn.execute("PRAGMA database_list").fetchone()[2]).parent
    done = run_cli(
        "sessions", "export", ids["fanout"], "--format", "otlp-proto", "-o", str(out), home=home
    )
    assert done.returncode == 0, done.stderr
    spans = spans_of(ExportTraceServiceRequest.FromString(out.read_bytes()))
    assert len([s for s in spans if s.name == "chat test-model"]) >= 6


def test_the_cli_offers_every_export_format() -> None:
    from rlm_desktop.commands.sessions import EXPORT_FORMATS
    from rlm_desktop.exports import FORMATS

    assert sorted(EXPORT_FORMATS) == sorted(FORMATS)
