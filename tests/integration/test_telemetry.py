"""Observability: the span tree of an ingest and of a chat (with the GenAI token counts the
scripted model server reports), /metrics and who may read it, the request id in the header and
in the JSON log lines.

A real SQLite index of one small PDF (tests/helpers/canaries.py), the real embedder, the app in
an in-process client, and the scripted OpenAI-compatible server of tests/helpers/transcripts.py
playing the model (rewrite, rerank and a streamed answer, each with its ``usage``).
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.helpers.canaries import text_pdf
from tests.helpers.transcripts import Reply, Scripted, completion, scripted_server
from truthbase import accounts, telemetry
from truthbase.config import ChunkingSettings, LLMSettings, QuotaSettings, Settings
from truthbase.embed import Embedder, load_embedder
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.server import create_app
from truthbase.store import SQLiteStore

FACTS = [
    "The quarterly maintenance report covers the pumping stations of the northern district.",
    "Station seven replaced two valves in March and measured a flow of 41 litres per second.",
    "Station three was inspected in April; its pumps ran without fault for the whole quarter.",
]


@pytest.fixture()
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.set_tracer_provider(provider)
    try:
        yield exporter
    finally:
        telemetry.set_tracer_provider(None)
        provider.shutdown()


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder(Settings().embedder)


def _ingest(tmp_path: Path, embedder: Embedder) -> Path:
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(text_pdf(FACTS, title="Maintenance report"))
    db = tmp_path / "index.sqlite"
    store = SQLiteStore(db)
    try:
        # Small chunks: one a fact, so that the reranker has candidates to order.
        options = IngestOptions(chunking=ChunkingSettings(max_chars=120))
        outcome = ingest_file(pdf, store, embedder, options)
    finally:
        store.close()
    assert outcome.status == "ingested", outcome
    return db


def _tree(finished: tuple[ReadableSpan, ...]) -> dict[str, list[str]]:
    """Each span's name -> its children's names (names of a trace are unique enough here)."""
    by_id = {s.context.span_id: s for s in finished}
    children: dict[str, list[str]] = {s.name: [] for s in finished}
    for s in finished:
        if s.parent is not None and s.parent.span_id in by_id:
            children[by_id[s.parent.span_id].name].append(s.name)
    return children


def _one(finished: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    found = [s for s in finished if s.name == name]
    assert len(found) == 1, (name, [s.name for s in finished])
    return found[0]


def _usage(prompt: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def _stream_usage(prompt: int, completion_tokens: int) -> str:
    """The last chunk of a stream asked for with ``include_usage``: no choices, the usage."""
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "scripted",
        "choices": [],
        "usage": _usage(prompt, completion_tokens),
    }
    return f"data: {json.dumps(chunk)}\n\n"


def _say_chat(server: Scripted) -> None:
    rewrite = completion('["flow at station seven"]')
    rewrite["usage"] = _usage(50, 9)
    rerank = completion("[1]")
    rerank["usage"] = _usage(300, 3)
    server.say(
        Reply(body=rewrite),
        Reply(body=rerank),
        Reply(
            pieces=["Station seven measured a flow of ", "41 litres per second [1]."],
            tail=_stream_usage(812, 14),
        ),
    )


def _settings(db: Path, server: Scripted, **changes: Any) -> Settings:
    return Settings(
        db=db,
        llm=LLMSettings(
            base_url=server.base_url,
            model="scripted-model",
            rewrite_enabled=True,
            rerank_enabled=True,
        ),
        quota=QuotaSettings(per_client_per_minute=50),
        **changes,
    )


def _chat(client: TestClient, question: str, **headers: str) -> tuple[list[dict[str, Any]], Any]:
    with client.stream(
        "POST", "/api/chat", json={"question": question, "mode": "llm"}, headers=headers
    ) as response:
        assert response.status_code == 200
        events = [
            json.loads(line[len("data: ") :])
            for line in response.iter_lines()
            if line.startswith("data: ")
        ]
    return events, response


def test_ingest_and_chat_span_trees_with_token_counts(
    tmp_path: Path, embedder: Embedder, spans: InMemorySpanExporter
) -> None:
    db = _ingest(tmp_path, embedder)
    ingest = _tree(spans.get_finished_spans())
    assert {"extract", "chunk", "embed", "store"} <= set(ingest["ingest"]), ingest
    spans.clear()

    with scripted_server() as server:
        _say_chat(server)
        with TestClient(create_app(_settings(db, server))) as client:
            events, _ = _chat(client, "What flow did station seven measure?")
        assert len(server.requests) == 3
        assert server.requests[2]["body"]["stream_options"] == {"include_usage": True}
    done = events[-1]
    assert done["type"] == "done", events
    supported = [c for c in done["answer"]["citations"] if c["state"] == "supported"]
    assert supported, done

    finished = spans.get_finished_spans()
    tree = _tree(finished)
    assert {"quota", "answer"} <= set(tree["POST /api/chat"]), tree
    assert tree["answer"] == ["retrieve", "generate", "resolve"] or set(tree["answer"]) >= {
        "retrieve",
        "generate",
        "resolve",
    }, tree
    assert {"rewrite", "search", "rerank"} <= set(tree["retrieve"]), tree
    # The search of the question and of the rewrite's sub-query, each with its arms.
    searches = [s for s in finished if s.name == "search"]
    assert len(searches) == 2
    for arm in ("fts", "embed", "dense", "fuse"):
        assert arm in tree["search"], tree
    assert "verify" in tree["resolve"], tree
    # The three model calls, each a child of its stage, with the GenAI attributes.
    calls = [s for s in finished if s.name == "chat scripted-model"]
    assert len(calls) == 3
    stage_of = {s.context.span_id: s.name for s in finished}
    tokens = {
        stage_of[c.parent.span_id]: (
            c.attributes["gen_ai.usage.input_tokens"],
            c.attributes["gen_ai.usage.output_tokens"],
        )
        for c in calls
        if c.parent is not None and c.attributes is not None
    }
    assert tokens == {"rewrite": (50, 9), "rerank": (300, 3), "generate": (812, 14)}
    generate_call = next(c for c in calls if stage_of[c.parent.span_id] == "generate")  # type: ignore[union-attr]
    assert generate_call.attributes is not None
    assert generate_call.attributes["gen_ai.system"] == "openai_compatible"
    assert generate_call.attributes["gen_ai.request.model"] == "scripted-model"
    assert generate_call.attributes["gen_ai.operation.name"] == "chat"
    # One trace: every span of the chat shares the request's trace id.
    root = _one(finished, "POST /api/chat")
    assert {s.context.trace_id for s in finished} == {root.context.trace_id}
    assert root.attributes is not None and root.attributes["http.response.status_code"] == 200


def test_without_a_provider_nothing_is_recorded(tmp_path: Path, embedder: Embedder) -> None:
    """The default: OpenTelemetry's no-op tracer, so a span is not recording."""
    with telemetry.span("search") as current:
        assert not current.is_recording()
    assert not telemetry.configure_tracing(Settings().telemetry)


def _metric(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} {labels} not in the metrics")


def test_metrics_count_requests_stages_tokens_and_jobs(tmp_path: Path, embedder: Embedder) -> None:
    db = _ingest(tmp_path, embedder)
    with scripted_server() as server:
        _say_chat(server)
        with TestClient(create_app(_settings(db, server))) as client:
            before = client.get("/metrics").text
            _chat(client, "What flow did station seven measure?")
            client.get("/api/search", params={"q": "valves"})
            text = client.get("/metrics")
    assert text.status_code == 200
    assert text.headers["content-type"].startswith("text/plain")
    body = text.text

    def grew(name: str, **labels: str) -> float:
        try:
            was = _metric(before, name, **labels)
        except AssertionError:
            was = 0.0
        return _metric(body, name, **labels) - was

    assert grew("truthbase_requests_total", route="/api/chat", method="POST", status="200") == 1
    assert grew("truthbase_requests_total", route="/api/search", method="GET", status="200") == 1
    assert grew("truthbase_request_seconds_count", route="/api/chat") == 1
    for stage in ("retrieve", "generate", "resolve", "fts", "dense", "rerank", "quota"):
        assert grew("truthbase_stage_seconds_count", stage=stage) >= 1, stage
    assert grew("truthbase_model_tokens_total", model="scripted-model", kind="input") == 1162
    assert grew("truthbase_model_tokens_total", model="scripted-model", kind="output") == 26
    assert _metric(body, "truthbase_job_queue_depth", state="queued") == 0


def test_metrics_are_for_admins_and_loopback_only(tmp_path: Path, embedder: Embedder) -> None:
    db = _ingest(tmp_path, embedder)
    store = SQLiteStore(db)
    try:
        accounts.add_user(store, "ann", "a long password 1", admin=True)
        accounts.add_user(store, "bob", "a long password 2")
        ann = accounts.create_token(store, "ann", "scrape").secret
        bob = accounts.create_token(store, "bob", "scrape").secret
    finally:
        store.close()
    app = create_app(Settings(db=db))
    with TestClient(app, client=("203.0.113.9", 5000)) as remote:
        assert remote.get("/metrics").status_code == 403
        assert remote.get("/metrics", headers={"Authorization": f"Bearer {bob}"}).status_code == 403
        admin = remote.get("/metrics", headers={"Authorization": f"Bearer {ann}"})
        assert admin.status_code == 200 and "truthbase_requests_total" in admin.text
    with TestClient(app, client=("127.0.0.1", 5000)) as local:
        assert local.get("/metrics").status_code == 200
        # Through a proxy on the same host, the client is not known to be local.
        proxied = local.get("/metrics", headers={"X-Forwarded-For": "198.51.100.7"})
        assert proxied.status_code == 403


@pytest.fixture()
def json_log() -> Iterator[io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(telemetry.RequestIdFilter())
    handler.setFormatter(telemetry.JsonFormatter())
    access = logging.getLogger("truthbase.access")
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    try:
        yield out
    finally:
        access.removeHandler(handler)
        access.setLevel(logging.NOTSET)


def test_request_id_is_echoed_and_in_every_log_line(
    tmp_path: Path, embedder: Embedder, json_log: io.StringIO
) -> None:
    db = _ingest(tmp_path, embedder)
    with TestClient(create_app(Settings(db=db))) as client:
        given = client.get("/healthz", headers={"X-Request-ID": "job-42.a_b"})
        made = client.get("/api/documents")
        hostile = client.get("/healthz", headers={"X-Request-ID": "x\r\nSet-Cookie: a=b" * 9})
    assert given.headers["x-request-id"] == "job-42.a_b"
    assert len(made.headers["x-request-id"]) == 32
    assert hostile.headers["x-request-id"] != "x\r\nSet-Cookie: a=b" * 9
    assert len(hostile.headers["x-request-id"]) == 32
    lines = [json.loads(line) for line in json_log.getvalue().splitlines()]
    assert [(e["request_id"], e["message"].split()[:3]) for e in lines] == [
        ("job-42.a_b", ["GET", "/healthz", "200"]),
        (made.headers["x-request-id"], ["GET", "/api/documents", "200"]),
        (hostile.headers["x-request-id"], ["GET", "/healthz", "200"]),
    ]
    assert {e["logger"] for e in lines} == {"truthbase.access"}
    assert all(e["level"] == "INFO" and e["ts"] for e in lines)


def test_json_log_format_setting() -> None:
    root = logging.getLogger()
    handler = telemetry.configure_logging(Settings(telemetry={"log_format": "json"}).telemetry)
    try:
        assert isinstance(handler.formatter, telemetry.JsonFormatter)
        token = telemetry.REQUEST_ID.set("r-1")
        try:
            record = logging.LogRecord(
                "truthbase.x", logging.WARNING, __file__, 1, "hi %s", ("x",), None
            )
            for f in handler.filters:
                assert not isinstance(f, logging.Filter) or f.filter(record)
            entry = json.loads(handler.format(record))
        finally:
            telemetry.REQUEST_ID.reset(token)
        assert entry["message"] == "hi x" and entry["request_id"] == "r-1"
        assert entry["level"] == "WARNING"
    finally:
        root.removeHandler(handler)


def test_spans_go_out_by_otlp_when_an_endpoint_is_set() -> None:
    """A collector on 127.0.0.1 (a bare HTTP server) receives the spans as OTLP/HTTP protobuf."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    received: list[tuple[str, str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, self.headers["Content-Type"], body))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{httpd.server_address[1]}"
        settings = Settings(telemetry={"otlp_endpoint": endpoint, "service_name": "tb-test"})
        assert telemetry.configure_tracing(settings.telemetry)
        with telemetry.span("retrieve", k=8), telemetry.span("search"):
            pass
        telemetry.shutdown_tracing()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert received, "no export reached the collector"
    path, content_type, body = received[0]
    assert path == "/v1/traces" and content_type == "application/x-protobuf"
    assert b"retrieve" in body and b"search" in body and b"tb-test" in body
