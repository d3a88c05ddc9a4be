"""Plain OpenTelemetry semantic conventions (not GenAI's) that the trace readers rely on."""

from __future__ import annotations

EXCEPTION_EVENT = 'exception'
"""The event `Span.record_exception` adds, with the keys below."""
EXCEPTION_TYPE = 'exception.type'
EXCEPTION_MESSAGE = 'exception.message'
EXCEPTION_KEYS = (EXCEPTION_TYPE, EXCEPTION_MESSAGE)
EXCEPTION_FOLD = {EXCEPTION_EVENT: {key: key for key in EXCEPTION_KEYS}}
"""What the readers copy from an exception event onto its span (`SpanNode` has no events)."""
