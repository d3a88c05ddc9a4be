"""Spans under keys no decoder reads (a misspelt `scopeSpan`, say): counted and warned about, never dropped unsaid.

Only the containers of each format are checked (an OTLP request, resource and scope; a Jaeger
export and trace), for keys outside what that container may hold. A span is any object with a
span id key (`spanId`, `spanID`) that is not a link or reference; the warning goes to its trace
(so `inspect` shows it beside the spans that were read), or to the load's `on_warning` when its
trace id is unusable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._assemble import Assembler, Location
from ._errors import BadData

_SPAN_ID_KEYS = ('spanId', 'spanID')
_TRACE_ID_KEYS = ('traceId', 'traceID')
_NOT_SPANS = frozenset({'links', 'references'})


def _spans_under(value: Any) -> tuple[int, dict[object, int], int]:
    """(spans, spans per raw trace id, objects with a trace id key) in `value`, walked without recursion."""
    spans = 0
    keys = 0
    per_trace: dict[object, int] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, in_links = stack.pop()
        if type(item) is dict:
            if any(key in item for key in _TRACE_ID_KEYS):
                keys += 1
            if any(key in item for key in _SPAN_ID_KEYS) and not in_links:
                spans += 1
                raw = next((item[key] for key in _TRACE_ID_KEYS if key in item), None)
                raw = raw if type(raw) is str else None
                per_trace[raw] = per_trace.get(raw, 0) + 1
            for key, child in item.items():
                if type(child) is list:
                    stack.extend((grandchild, key in _NOT_SPANS) for grandchild in child)
                elif type(child) is dict:
                    stack.append((child, False))
        elif type(item) is list:
            stack.extend((child, in_links) for child in item)
    return spans, per_trace, keys


def unknown_keys(
    container: Mapping[str, Any],
    known: frozenset[str],
    location: Location,
    assembler: Assembler,
    trace_key: Callable[[object], str],
) -> int:
    """Warn about the spans under keys of `container` outside `known`; returns the trace id keys under them.

    The count feeds the repeated-key check (see `Reader.decode`): these spans were seen, not lost.
    """
    seen = 0
    for key in sorted(key for key in container if key not in known):
        spans, per_trace, keys = _spans_under(container[key])
        seen += keys
        if not spans:
            continue
        where = f'under the unknown key {key!r} were not read (a misspelt key?)'
        unplaced = per_trace.pop(None, 0)
        for raw, count in per_trace.items():
            try:
                builder = assembler.builder_for(raw, trace_key)
            except BadData:
                unplaced += count
                continue
            builder.warn(location, f'{count} span(s) of this trace {where}')
        if unplaced:
            assembler.note(location, f'{unplaced} span(s) {where}')
    return seen
