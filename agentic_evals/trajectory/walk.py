"""The walks over a tree's spans, each applying the conventions registry to every span.

`walk` finds every call attempt and model request (the extraction); `count` and `requests_of` find
only what a budget or the run metrics need, so a count does not pay for what it will never read. All
three apply the same descriptions, so they agree on what a tool call and a model request are.

The walks are the hot path of every evaluation, so the registry's first tool-span and request-span
descriptions (the GenAI conventions', merged with pydantic-ai's and ADK's) are applied inline, as
`registry.classify_tool_span` and `registry.classify_request_span` would; any other description or
classifier is asked through `Registry.classify_rest`, one call per span holding its marker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, Final, NamedTuple

from pydantic_evals.otel.span_tree import SpanNode

from ..conventions.family import IGNORED, MODEL_REQUEST, Answer, RequestSpans, SpanKind, ToolSpans
from ..conventions.genai import non_text_tool_name
from ..conventions.registry import REGISTRY, Registry

Call = tuple[SpanNode, str, SpanKind]
"""A call as the walk records it: (span, tool name, kind), read with the indices below."""
SPAN: Final = 0
NAME: Final = 1
KIND: Final = 2

Request = tuple[SpanNode, int]
"""A model request: (span, how many calls were walked before it), read with these indices."""
REQUEST_SPAN: Final = 0
CALLS_BEFORE: Final = 1

_NEVER = '\x00'  # a key no span holds: stands for a description's unset keys
_ABSENT: Final = object()  # what `get` returns for a key a span does not hold (any value may be held)
_NO_TOOL_SPANS = ToolSpans(_NEVER)
_NO_REQUEST_SPANS = RequestSpans(_NEVER, _NEVER, frozenset())


def _first_tool_spans(registry: Registry) -> ToolSpans:
    return registry.tool_rules[0] if registry.tool_rules else _NO_TOOL_SPANS


def _first_request_spans(registry: Registry) -> RequestSpans:
    return registry.request_rules[0] if registry.request_rules else _NO_REQUEST_SPANS


_WalkSettings = tuple[
    str,
    tuple[str, ...],
    frozenset[str],
    frozenset[str],
    frozenset[str],
    str,
    tuple[str, ...],
    str | None,
    str,
    object,
    str,
    str,
    frozenset[str],
    str | None,
    bool,
    Callable[[SpanNode, list[str]], Answer] | None,
    tuple[str, ...],
    Callable[[SpanNode], bool],
]


@lru_cache(maxsize=16)
def _walk_settings(registry: Registry) -> _WalkSettings:
    """What `walk` reads of `registry`'s first descriptions, gathered once per registry (a registry's
    rules never change): on a small tree, gathering them on every walk is a visible share of it."""
    tool = _first_tool_spans(registry)
    request = _first_request_spans(registry)
    return (
        tool.name_key,
        tool.span_prefixes,
        tool.span_names,
        tool.not_calls,
        tool.output_span_names,
        tool.output_message_key or _NEVER,
        tool.output_message_prefixes,
        tool.deferred_key,
        tool.rejected_key or _NEVER,
        tool.rejected_value if tool.rejected_key else _NEVER,  # never equal to a missing key's None
        request.model_key,
        request.operation_key,
        request.operations,
        request.excluded_key,
        # A span holding the tool marker is never a request when that marker is the excluded key
        # (GenAI's): the request check then skips it, and skips the excluded key on the others.
        request.excluded_key == tool.name_key,
        registry.classify_rest if registry.has_rest else None,
        registry.rest_markers,
        registry.in_order_check,
    )


class Walked(NamedTuple):
    """What one walk over a tree found, in the tree's (start) order."""

    calls: list[Call]
    requests: list[Request]
    invalid: list[int]
    """Positions of calls rejected before running (kind `'invalid'`): the only ones that can start
    ahead of calls the model issued before them."""
    notes: list[str]
    breaks: list[int]
    """Positions `k` whose call is not known to follow call `k - 1` in issue order: another parent, a
    framework that does not start a response's calls in its order (asked once per parent, when its
    second call comes: siblings are one instrumentation's), or a start not strictly later (a tie says
    nothing). Noted while each span is at hand, so putting calls in issue order reads only the
    stretches around these. A call rejected before running is not one: it starts ahead of its
    siblings by design, and the rule for `invalid` puts it back."""


def walk(nodes: Iterable[SpanNode], registry: Registry = REGISTRY) -> Walked:
    """Every tool call attempt and model request in `nodes`."""
    calls: list[Call] = []
    requests: list[Request] = []
    invalid: list[int] = []
    notes: list[str] = []
    breaks: list[int] = []
    add_call, add_request, add_break = calls.append, requests.append, breaks.append
    # The previous call's parent, whether its framework starts calls in issue order (`None` until a
    # second call under it asks), and its start: the first call breaks (no parent is `_NEVER`), so
    # its start is never compared with this placeholder.
    last_parent: object = _NEVER
    last_trusted: bool | None = None
    last_start: Any = None
    (
        tool_key,
        prefixes,
        span_names,
        not_calls,
        output_names,
        message_key,
        message_prefixes,
        deferred_key,
        rejected_key,
        rejected_value,
        model_key,
        operation_key,
        operations,
        excluded_key,
        excluded_is_tool,
        rest,
        markers,
        in_order,
    ) = _walk_settings(registry)
    for node in nodes:
        attributes = node.attributes
        name = attributes.get(tool_key, _ABSENT)  # one look-up for the marker and the tool name
        if name is not _ABSENT:
            span_name = node.name
            if type(span_name) is str and (span_name.startswith(prefixes) or span_name in span_names):
                if type(name) is not str:
                    notes.append(non_text_tool_name(node, tool_key))
                    continue
                if name in not_calls:
                    continue
                kind: SpanKind
                message = attributes.get(message_key)
                if span_name in output_names or (
                    type(message) is str and message.startswith(message_prefixes) and span_name not in span_names
                ):
                    kind = 'output'
                elif deferred_key in attributes:
                    kind = 'deferred'
                elif node.status == 'error':
                    if attributes.get(rejected_key) == rejected_value:
                        kind = 'invalid'
                        invalid.append(len(calls))
                    else:
                        kind = 'failed'
                else:
                    kind = 'ok'
                parent, start = node.parent, node.start_timestamp
                if parent is not last_parent:
                    add_break(len(calls))
                    last_parent, last_trusted = parent, None
                else:
                    if last_trusted is None:  # asked only of a parent with a second call
                        last_trusted = in_order(node)
                    if not (last_trusted and last_start < start):
                        add_break(len(calls))
                last_start = start
                add_call((node, name, kind))
                continue
            if not excluded_is_tool and (
                model_key in attributes
                and excluded_key not in attributes
                and attributes.get(operation_key) in operations
            ):
                add_request((node, len(calls)))
                continue
        elif (
            model_key in attributes
            and (excluded_is_tool or excluded_key not in attributes)
            and attributes.get(operation_key) in operations
        ):
            add_request((node, len(calls)))
            continue
        if rest is None:
            continue
        for marker in markers:  # `_holds_any`, inlined: asked of every span no rule above claimed
            if marker in attributes:
                break
        else:
            continue
        answer = rest(node, notes)
        if answer is MODEL_REQUEST:
            add_request((node, len(calls)))
        elif answer is not None and answer is not IGNORED:
            for part in answer if type(answer) is list else ((node, *answer),):
                if part[KIND] == 'invalid':
                    invalid.append(len(calls))
                span = part[SPAN]
                parent, start = span.parent, span.start_timestamp
                if parent is not last_parent:
                    add_break(len(calls))
                    last_parent, last_trusted = parent, None
                else:
                    if last_trusted is None:  # asked only of a parent with a second call
                        last_trusted = in_order(span)
                    if not (last_trusted and last_start < start):
                        add_break(len(calls))
                last_start = start
                add_call(part)
    return Walked(calls, requests, invalid, notes, breaks)


def _holds_any(attributes: Mapping[str, object], markers: tuple[str, ...]) -> bool:
    """Whether `classify_rest` could claim a span with these attributes: a few look-ups instead of
    its call, for the spans no family's first description claims (agent runs, case spans)."""
    for marker in markers:  # noqa: SIM110  # a loop: `any` over a generator costs what it saves
        if marker in attributes:
            return True
    return False


class Counts(NamedTuple):
    ok: int
    failed: int
    requests: int


def count(nodes: Iterable[SpanNode], registry: Registry = REGISTRY) -> Counts:
    """How many calls succeeded and failed, and how many model requests: `walk`'s, without records."""
    ok = failed = requests = 0
    tool = _first_tool_spans(registry)
    tool_key, prefixes, span_names, not_calls = tool.name_key, tool.span_prefixes, tool.span_names, tool.not_calls
    output_names, message_key, message_prefixes = (
        tool.output_span_names,
        tool.output_message_key or _NEVER,
        tool.output_message_prefixes,
    )
    deferred_key = tool.deferred_key
    request = _first_request_spans(registry)
    model_key, operation_key, operations, excluded_key = (
        request.model_key,
        request.operation_key,
        request.operations,
        request.excluded_key,
    )
    rest = registry.classify_rest if registry.has_rest else None
    markers = registry.rest_markers
    notes: list[str] = []
    for node in nodes:
        attributes = node.attributes
        if tool_key in attributes:
            span_name = node.name
            if type(span_name) is str and (span_name.startswith(prefixes) or span_name in span_names):
                name = attributes[tool_key]
                if type(name) is str and name not in not_calls and span_name not in output_names:
                    message = attributes.get(message_key)
                    if (
                        not (
                            type(message) is str
                            and message.startswith(message_prefixes)
                            and span_name not in span_names
                        )
                        and deferred_key not in attributes
                    ):
                        if node.status == 'error':
                            failed += 1
                        else:
                            ok += 1
                continue
        if model_key in attributes and excluded_key not in attributes and attributes.get(operation_key) in operations:
            requests += 1
            continue
        if rest is not None and _holds_any(attributes, markers):
            answer = rest(node, notes)
            if answer is MODEL_REQUEST:
                requests += 1
            elif answer is not None and answer is not IGNORED:
                for kind in [part[KIND] for part in answer] if type(answer) is list else (answer[1],):
                    if kind == 'ok':
                        ok += 1
                    elif kind in ('failed', 'invalid'):
                        failed += 1
    return Counts(ok, failed, requests)


def requests_of(nodes: Iterable[SpanNode], registry: Registry = REGISTRY) -> list[SpanNode]:
    """The model requests in `nodes` (the same as `walk`'s); tool spans are skipped unread."""
    found: list[SpanNode] = []
    add = found.append
    request = _first_request_spans(registry)
    model_key, operation_key, operations, excluded_key = (
        request.model_key,
        request.operation_key,
        request.operations,
        request.excluded_key,
    )
    others = len(registry.request_rules) > 1 or bool(registry.request_classifiers)
    # A span the first tool rule claims is a call, never a request; one holding the tool marker
    # without being a call (OpenLIT's `chat` spans name the tools they issued) is asked as any other.
    tool = _first_tool_spans(registry)
    tool_key, prefixes, span_names = tool.name_key, tool.span_prefixes, tool.span_names
    check_excluded = excluded_key is not None and excluded_key != tool_key  # GenAI's is the tool key
    for node in nodes:
        attributes = node.attributes
        if tool_key in attributes:
            operation = attributes.get(operation_key)
            if operation is not None and operation not in operations:
                continue  # a tool span (`execute_tool`): its operation is no request's
            span_name = node.name
            if type(span_name) is str and (span_name.startswith(prefixes) or span_name in span_names):
                continue
            if others and registry.is_model_request(node):
                add(node)
            continue
        if (
            model_key in attributes
            and attributes.get(operation_key) in operations
            and (not check_excluded or excluded_key not in attributes)
        ) or (others and registry.is_model_request(node)):
            add(node)
    return found
