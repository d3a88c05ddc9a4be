"""Collect the spans produced inside a block of code into a pydantic-evals `SpanTree`.

    with capture() as captured:
        agent.run_sync('...')
    trajectory = extract_trajectory(captured.tree)

One span processor is attached per tracer provider, once. A span belongs to every capture that
is active in the context where it starts (captures nest), or, when it starts where no capture is
active, to the captures of its parent span. The first rule covers asyncio tasks and
`contextvars`-propagating thread pools (`asyncio.to_thread`, `loop.run_in_executor` with a copied
context); the second covers threads that carry only the OpenTelemetry context (for example
through opentelemetry-instrumentation-threading). A bare `threading.Thread` propagates neither
context; its spans start new traces and are not captured.

Provider resolution, in order: the `tracer_provider` argument; the global provider (Logfire's
proxy is unwrapped to the SDK provider it holds); and when nothing is configured, capture installs
an OpenTelemetry SDK `TracerProvider` as the global provider, because no span is recorded without
one. A provider that cannot take span processors yields a recording error instead: `tree` then
raises `SpanTreeRecordingError`, and evaluators report it as a failing result.
"""

from __future__ import annotations

import threading
import weakref
from contextvars import ContextVar
from types import TracebackType
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from pydantic_evals.otel import SpanTree, SpanTreeRecordingError

from .errors import AgenticEvalsError

_active: ContextVar[tuple[Capture, ...]] = ContextVar('agentic_evals_active_captures', default=())


class CaptureError(SpanTreeRecordingError, AgenticEvalsError):
    """Why `capture()` could not record: it says what to change, so evaluators quote it as it is."""


class Capture:
    """The spans of one `with capture():` block; use it as a sync or async context manager."""

    def __init__(self, tracer_provider: trace.TracerProvider | None = None) -> None:
        self._tracer_provider = tracer_provider
        self._spans: list[ReadableSpan] = []
        self._lock = threading.Lock()
        self._open = False
        self._token: Any = None
        self._tree: SpanTree | None = None
        self.error: SpanTreeRecordingError | None = None
        """Why nothing can be recorded, when the provider cannot take a span processor."""

    @property
    def spans(self) -> list[ReadableSpan]:
        """The finished spans collected so far, in the order they ended."""
        with self._lock:
            return list(self._spans)

    @property
    def tree(self) -> SpanTree:
        """The `SpanTree` of the spans collected; raises the recording error if there is one.

        Inside the block each access builds a tree of the spans so far; after the block the tree is
        built once and kept, so the trajectory cached for it is reused.
        """
        if self.error is not None:
            raise self.error
        if self._tree is not None:
            return self._tree
        tree = SpanTree()
        tree.add_readable_spans(self.spans)
        if not self._open:
            self._tree = tree
        return tree

    def __enter__(self) -> Capture:
        # Entering again starts a new block: what the previous one collected is dropped.
        with self._lock:
            self._spans = []
        self._tree = None
        processor = _processor_for(self._tracer_provider)
        if isinstance(processor, SpanTreeRecordingError):
            self.error = processor
        self._open = True
        self._token = _active.set((*_active.get(), self))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._open = False
        _active.reset(self._token)

    async def __aenter__(self) -> Capture:
        return self.__enter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    def _add(self, span: ReadableSpan) -> None:
        # A span that ends after its capture closed (a task left running) is not part of the block.
        if self._open:
            with self._lock:
                self._spans.append(span)


def capture(tracer_provider: trace.TracerProvider | None = None) -> Capture:
    """A context manager (sync or async) that collects the spans started inside it.

    Args:
        tracer_provider: The provider whose spans to collect; the global provider by default.
    """
    return Capture(tracer_provider)


class _CaptureProcessor(SpanProcessor):
    """Routes each finished span to the captures it started under. Never raises."""

    def __init__(self) -> None:
        self._owners: dict[int, tuple[Capture, ...]] = {}

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        try:
            owners = _active.get()
            if not owners and span.parent is not None:
                owners = self._owners.get(span.parent.span_id, ())
            if owners and span.context is not None:
                self._owners[span.context.span_id] = owners
        except Exception:  # pragma: no cover - defensive: tracing must never break the application
            pass

    def on_end(self, span: ReadableSpan) -> None:
        try:
            if span.context is None:
                return
            for owner in self._owners.pop(span.context.span_id, ()):
                owner._add(span)
        except Exception:  # pragma: no cover - defensive: tracing must never break the application
            pass

    def shutdown(self) -> None:
        self._owners.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


_processors: dict[int, tuple[weakref.ref[Any] | Any, _CaptureProcessor]] = {}
_processors_lock = threading.Lock()


def _processor_for(tracer_provider: trace.TracerProvider | None) -> _CaptureProcessor | SpanTreeRecordingError:
    """The processor attached to the provider in use, attaching it on first use."""
    provider: Any = tracer_provider if tracer_provider is not None else ensure_global_provider()
    # Logfire's global provider is a proxy around the SDK provider that owns the processors.
    inner = getattr(provider, 'provider', None)
    if inner is not None and hasattr(inner, 'add_span_processor'):
        provider = inner
    if not hasattr(provider, 'add_span_processor'):
        return CaptureError(
            f'the tracer provider ({type(provider).__qualname__}) cannot take span processors, so no spans can be'
            ' captured; use an OpenTelemetry SDK TracerProvider or logfire.configure()'
        )
    key = id(provider)
    with _processors_lock:
        entry = _processors.get(key)
        if entry is not None:
            ref, processor = entry
            if (ref() if isinstance(ref, weakref.ref) else ref) is provider:
                return processor
        processor = _CaptureProcessor()
        provider.add_span_processor(processor)
        try:
            stored: weakref.ref[Any] | Any = weakref.ref(provider, lambda _: _processors.pop(key, None))
        except TypeError:  # not weakly referenceable: keep it alive rather than attach again each time
            stored = provider
        _processors[key] = (stored, processor)
        return processor


def ensure_global_provider() -> trace.TracerProvider:
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider):
        # Nothing configured: install a recording provider. `set_tracer_provider` only takes effect
        # once per process, so read the global back in case another thread won the race.
        trace.set_tracer_provider(SdkTracerProvider())
        provider = trace.get_tracer_provider()
    return provider
