"""Traces, metrics and the request id: what a chat or an ingest job did, stage by stage.

Spans (OpenTelemetry): every stage of a chat (``chat`` > ``quota``, ``retrieve`` > ``rewrite``,
``search`` > ``fts``/``embed``/``dense``/``late``, ``rerank``, ``generate``, ``resolve`` >
``verify``) and of an ingest job (``ingest`` > ``extract`` > ``ocr``, ``chunk``, ``embed``,
``store``) opens one with :func:`span`. A model call is a ``chat {model}`` span with the GenAI
semantic conventions (``gen_ai.system``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens``,
``gen_ai.usage.output_tokens``; :func:`model_span`, :func:`record_usage`).

Zero cost when unset: until :func:`configure_tracing` installs a provider (``telemetry.
otlp_endpoint`` set) the tracer is OpenTelemetry's no-op one, whose spans record nothing; the
only work left is a histogram observation per stage (Prometheus, in-process, no I/O).

Generators: a chat's events are produced one ``next()`` at a time, each in a fresh copy of the
request's context (Starlette's thread pool), so a span that stays open across a ``yield`` must
not be attached to the ambient context for longer than one step: :func:`traced` wraps an
iterator so that its span is current while each item is produced and nowhere else.

Metrics (Prometheus, :data:`REGISTRY`): requests and their latency per route, stage latency,
model tokens, the job queue depth (set at each scrape). The request id (:data:`REQUEST_ID`, set
per request by the server) reaches every log record through :class:`RequestIdFilter`, and
:class:`JsonFormatter` writes one JSON object a line.
"""

from __future__ import annotations

import contextvars
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from .config import TelemetrySettings

__all__ = [
    "JOB_QUEUE",
    "REGISTRY",
    "REQUEST_ID",
    "JsonFormatter",
    "RequestIdFilter",
    "bind",
    "configure_logging",
    "configure_tracing",
    "current",
    "model_call",
    "model_span",
    "observe_request",
    "record_usage",
    "set_tracer_provider",
    "shutdown_tracing",
    "span",
    "start_span",
    "traced",
    "tracer",
]

_NAME = "truthbase"
_provider: TracerProvider | None = None

#: The current request's id ("-" outside a request); the server's middleware sets it.
REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar(
    "truthbase_request_id", default="-"
)

#: This process's metrics (a registry of our own: only TruthBase's series, nothing global).
REGISTRY = CollectorRegistry(auto_describe=True)
_REQUESTS = Counter(
    "truthbase_requests",
    "HTTP requests by route template, method and status.",
    ["route", "method", "status"],
    registry=REGISTRY,
)
_REQUEST_SECONDS = Histogram(
    "truthbase_request_seconds",
    "HTTP request latency (to the end of the body) by route template.",
    ["route"],
    registry=REGISTRY,
)
_STAGE_SECONDS = Histogram(
    "truthbase_stage_seconds",
    "Latency of each chat and ingest stage (the span names).",
    ["stage"],
    registry=REGISTRY,
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)
_TOKENS = Counter(
    "truthbase_model_tokens",
    "Tokens of model calls as the server reported them, by model and kind (input/output).",
    ["model", "kind"],
    registry=REGISTRY,
)
#: Ingest jobs waiting or running (``state``: queued, running), set when /metrics is scraped.
JOB_QUEUE = Gauge(
    "truthbase_job_queue_depth",
    "Ingest jobs by state, counted when /metrics is scraped.",
    ["state"],
    registry=REGISTRY,
)


def set_tracer_provider(provider: TracerProvider | None) -> None:
    """Use ``provider`` for TruthBase's spans (None: the global one, a no-op unless an
    application set one). Tests pass an SDK provider with an in-memory exporter."""
    global _provider
    _provider = provider


def tracer() -> Tracer:
    if _provider is not None:
        return _provider.get_tracer(_NAME)
    return trace.get_tracer(_NAME)


def configure_tracing(settings: TelemetrySettings) -> bool:
    """Install an OTLP (HTTP/protobuf) exporter when ``settings.otlp_endpoint`` is set; True
    when it did. The SDK is imported only then (the ``telemetry`` extra)."""
    if not settings.otlp_endpoint:
        return False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider as SdkProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = SdkProvider(resource=Resource.create({"service.name": settings.service_name}))
    endpoint = settings.otlp_endpoint.rstrip("/")
    if not endpoint.endswith("/v1/traces"):
        endpoint += "/v1/traces"
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    set_tracer_provider(provider)
    return True


def shutdown_tracing() -> None:
    """Export what is pending and go back to the no-op tracer (the SDK also does this at exit)."""
    global _provider
    provider, _provider = _provider, None
    shutdown = getattr(provider, "shutdown", None)
    if callable(shutdown):
        shutdown()


def _fail(current: Span, exc: BaseException) -> None:
    if isinstance(exc, GeneratorExit):  # the consumer stopped early: not an error
        current.set_attribute("truthbase.cancelled", True)
        return
    current.record_exception(exc)
    current.set_status(Status(StatusCode.ERROR, type(exc).__name__))


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Span]:
    """A span named ``name`` around a block that does not ``yield`` (see :func:`traced` for one
    that does), child of the current one; its duration also goes to the stage histogram."""
    started = time.perf_counter()
    with tracer().start_as_current_span(
        name, attributes=_clean(attributes), record_exception=False, set_status_on_exception=False
    ) as current:
        try:
            yield current
        except BaseException as exc:
            _fail(current, exc)
            raise
        finally:
            _STAGE_SECONDS.labels(name).observe(time.perf_counter() - started)


T = TypeVar("T")


def traced(
    name: str, items: Iterable[T], *, opened: Span | None = None, **attributes: Any
) -> Iterator[T]:
    """``items`` under a span (``opened``, or a new one named ``name``, child of the span
    current at the first ``next``) that is current only while each item is produced; it ends
    when the items do, on an error, or when the consumer closes the iterator."""
    started = time.perf_counter()
    current = opened if opened is not None else None
    iterator = iter(items)
    try:
        while True:
            if current is None:
                current = tracer().start_span(name, attributes=_clean(attributes))
            token = otel_context.attach(trace.set_span_in_context(current))
            try:
                item = next(iterator)
            except StopIteration:
                return
            finally:
                otel_context.detach(token)
            yield item
    except BaseException as exc:
        if current is not None:
            _fail(current, exc)
        raise
    finally:
        if current is not None:
            current.end()
        _STAGE_SECONDS.labels(name).observe(time.perf_counter() - started)


def start_span(name: str, **attributes: Any) -> Span:
    """A span that is not made current (for :func:`traced`'s ``opened``), child of the current."""
    return tracer().start_span(name, attributes=_clean(attributes))


@contextmanager
def current(opened: Span) -> Iterator[None]:
    """``opened`` as the current span for a block that does not ``yield``."""
    token = otel_context.attach(trace.set_span_in_context(opened))
    try:
        yield
    finally:
        otel_context.detach(token)


P = ParamSpec("P")
R = TypeVar("R")


def bind(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run in a copy of the caller's context (its current span included): for work
    handed to another thread, where the span would otherwise start a new trace."""
    ctx = contextvars.copy_context()

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return ctx.run(fn, *args, **kwargs)

    return run


def _system(base_url: str | None) -> str:
    """``gen_ai.system``: "openai" for OpenAI's API, else the compatible server's kind as far
    as its URL tells (all of them speak the OpenAI protocol)."""
    if base_url is None or "api.openai.com" in base_url:
        return "openai"
    if ":11434" in base_url:
        return "ollama"
    return "openai_compatible"


def model_span(model: str, base_url: str | None, operation: str = "chat") -> Span:
    """The span of one model call, started and not made current, named as the GenAI
    conventions say (``chat MODEL``), client kind; the server's usage goes on it through
    :func:`record_usage`. A stream's span is ended by :func:`traced` (``opened``)."""
    return tracer().start_span(
        f"{operation} {model}",
        kind=SpanKind.CLIENT,
        attributes={
            "gen_ai.operation.name": operation,
            "gen_ai.system": _system(base_url),
            "gen_ai.request.model": model,
        },
    )


@contextmanager
def model_call(model: str, base_url: str | None, operation: str = "chat") -> Iterator[Span]:
    """:func:`model_span` around a whole (non-streaming) call: failed on an error, ended."""
    opened = model_span(model, base_url, operation)
    started = time.perf_counter()
    try:
        yield opened
    except BaseException as exc:
        _fail(opened, exc)
        raise
    finally:
        opened.end()
        _STAGE_SECONDS.labels("model").observe(time.perf_counter() - started)


def record_usage(
    target: Span, model: str, usage: object, response_model: str | None = None
) -> None:
    """The reply's ``usage`` (prompt/completion tokens, as OpenAI-compatible servers report
    them) on ``target`` and in the token counter; a reply without one records nothing."""
    if response_model:
        target.set_attribute("gen_ai.response.model", response_model)
    if usage is None:
        return
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if isinstance(prompt, int):
        target.set_attribute("gen_ai.usage.input_tokens", prompt)
        _TOKENS.labels(model, "input").inc(prompt)
    if isinstance(completion, int):
        target.set_attribute("gen_ai.usage.output_tokens", completion)
        _TOKENS.labels(model, "output").inc(completion)


def observe_request(route: str, method: str, status: int, seconds: float) -> None:
    _REQUESTS.labels(route, method, str(status)).inc()
    _REQUEST_SECONDS.labels(route).observe(seconds)


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    """Span attributes without the None values (OpenTelemetry refuses them)."""
    return {f"truthbase.{k}": v for k, v in attributes.items() if v is not None}


class RequestIdFilter(logging.Filter):
    """Puts the current request id (``-`` outside a request) on every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request id, the trace id when a
    span is recording, and the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", REQUEST_ID.get()),
        }
        active = trace.get_current_span().get_span_context()
        if active.is_valid:
            entry["trace_id"] = format(active.trace_id, "032x")
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(settings: TelemetrySettings, level: int = logging.INFO) -> logging.Handler:
    """One stderr handler on the root logger, in ``settings.log_format`` (text or json), with
    the request id on every line; returns it (the server's edge calls this once)."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        )
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    return handler
