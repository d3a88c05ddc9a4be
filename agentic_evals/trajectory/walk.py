"""The walks over a tree's spans, each asking the conventions registry what every span is.

`walk` finds everything (the extraction); `count` and `requests_of` find only what a budget or the
run metrics need, so a count does not pay for the records it will never read. All three read the
same registry tables, so they agree on what a tool call and a model request are.

The walks are the hot path of every evaluation: per span, a dictionary look-up per marker until one
is held, then one call per classifier until one claims the span.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NamedTuple

from pydantic_evals.otel.span_tree import SpanNode

from ..conventions.family import IGNORED, MODEL_REQUEST, Family, SpanKind
from ..conventions.registry import MARKERS, REQUEST_MARKERS

Call = tuple[SpanNode, str, SpanKind, Family]
"""A call as the walk records it: (span, tool name, kind, family), read with the indices below."""
SPAN: Final = 0
NAME: Final = 1
KIND: Final = 2
FAMILY: Final = 3

Request = tuple[SpanNode, Family, int]
"""A model request: (span, family, how many calls were walked before it), read with these indices."""
REQUEST_SPAN: Final = 0
REQUEST_FAMILY: Final = 1
CALLS_BEFORE: Final = 2


class Walked(NamedTuple):
    """What one walk over a tree found, in the tree's (start) order."""

    calls: list[Call]
    requests: list[Request]
    invalid: list[int]
    """Positions of calls rejected before running (kind `'invalid'`): the only ones that can start
    ahead of calls the model issued before them."""
    notes: list[str]


def walk(nodes: Iterable[SpanNode]) -> Walked:
    """Every tool call attempt and model request in `nodes`, with the family that read each."""
    calls: list[Call] = []
    requests: list[Request] = []
    invalid: list[int] = []
    notes: list[str] = []
    add_call, add_request = calls.append, requests.append
    markers = MARKERS
    for node in nodes:
        attributes = node.attributes
        for marker, chain in markers:
            if marker in attributes:
                for classify, family in chain:  # noqa: B007 (the family that claims the span is kept)
                    answer = classify(node, notes)
                    if answer is not None:
                        break
                else:
                    continue  # no family claims it under this marker: try the next one it holds
                break
        else:
            continue
        if answer is MODEL_REQUEST:
            add_request((node, family, len(calls)))
        elif answer is not IGNORED:
            name, kind = answer
            if kind == 'invalid':
                invalid.append(len(calls))
            add_call((node, name, kind, family))
    return Walked(calls, requests, invalid, notes)


class Counts(NamedTuple):
    ok: int
    failed: int
    requests: int


def count(nodes: Iterable[SpanNode]) -> Counts:
    """How many calls succeeded and failed, and how many model requests: `walk`'s, without records."""
    ok = failed = requests = 0
    markers = MARKERS
    notes: list[str] = []
    for node in nodes:
        attributes = node.attributes
        for marker, chain in markers:
            if marker in attributes:
                for classify, _ in chain:
                    answer = classify(node, notes)
                    if answer is not None:
                        break
                else:
                    continue
                break
        else:
            continue
        if answer is MODEL_REQUEST:
            requests += 1
        elif answer is not IGNORED:
            kind = answer[1]
            if kind == 'ok':
                ok += 1
            elif kind == 'failed' or kind == 'invalid':
                failed += 1
    return Counts(ok, failed, requests)


def requests_of(nodes: Iterable[SpanNode]) -> list[tuple[SpanNode, Family]]:
    """The model requests in `nodes` (the same as `walk`'s), with their families; tool spans are skipped unread."""
    found: list[tuple[SpanNode, Family]] = []
    markers = REQUEST_MARKERS
    notes: list[str] = []
    for node in nodes:
        attributes = node.attributes
        for marker, chain in markers:
            if marker in attributes:
                for classify, family in chain:
                    if classify(node, notes) is MODEL_REQUEST:
                        found.append((node, family))
                        break
                else:
                    continue
                break
    return found
