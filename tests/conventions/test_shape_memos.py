"""The registry works some answers out once per span shape (name and attribute keys): which families
may hold an agent run, which families say whose content switch a span is under. Spans of one shape
with other values, and spans of other shapes, must get the answers of asking every family in turn.

The spans are drawn from what the families themselves declare (`RunSpans`, `markers`,
`marker_spans`), so a family added later is covered without a change here.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_evals.otel.span_tree import SpanNode

from agentic_evals.conventions.family import GENERIC_CONTENT_SWITCH, not_recorded
from agentic_evals.conventions.registry import REGISTRY, Registry, Switches

from ..factories import TreeBuilder


def _run_vocabulary(registry: Registry) -> tuple[list[str], dict[str, list[Any]]]:
    """Span names and attribute values the families' `RunSpans` name, near misses beside them."""
    names = ['x', 'run', 'invoke_agent a']
    values: dict[str, list[Any]] = {}
    for family in registry.families:
        spans = family.run_spans
        if spans is None:
            continue
        names += sorted(spans.names)
        names += [f'{prefix}a' for prefix in spans.prefixes] + [p[:-1] for p in spans.prefixes if len(p) > 1]
        names += [f'A{suffix}' for suffix in spans.suffixes] + [suffix[1:] for suffix in spans.suffixes]
        for key, accepted in spans.keys.items():
            values.setdefault(key, ['other', 7, ['a']]).extend(sorted(accepted or ('a', 'b')))
    for family in registry.families:
        for key in family.markers:
            values.setdefault(key, ['a', 'agent', 3])
        names += sorted(family.marker_spans)
    return names, values


NAMES, VALUES = _run_vocabulary(REGISTRY)


@st.composite
def spans(draw: st.DrawFn) -> list[SpanNode]:
    """A chain of spans (each the parent of the next) of the families' names, keys and values."""
    b = TreeBuilder()
    parent = None
    for _ in range(draw(st.integers(1, 6))):
        keys = draw(st.lists(st.sampled_from(sorted(VALUES)), unique=True, max_size=4))
        node = b.span(draw(st.sampled_from(NAMES)), parent)
        node.attributes.update({key: draw(st.sampled_from(VALUES[key])) for key in keys})
        parent = node
    b.build()  # links each span to its parent
    return b.nodes


def _ask_every_family(node: SpanNode) -> str | None:
    for family in REGISTRY.families:
        answer = family.agent_run(node)
        if answer is not None:
            return answer
    return None


@settings(max_examples=400, deadline=None)
@given(spans())
def test_an_agent_run_is_what_asking_every_family_in_turn_says(nodes: list[SpanNode]) -> None:
    for node in nodes:
        assert REGISTRY.agent_run(node) == _ask_every_family(node)


def _switch_by_asking_every_family(node: SpanNode) -> str:
    """The content switch of the first switching family that recognises the span or an ancestor."""
    found = len(REGISTRY.switching)
    span: SpanNode | None = node
    while span is not None:
        found = min(
            found,
            next((i for i, f in enumerate(REGISTRY.switching) if f.recognises(span)), len(REGISTRY.switching)),
        )
        span = span.parent
    switch = REGISTRY.switching[found].content_switch if found < len(REGISTRY.switching) else None
    return not_recorded(switch or GENERIC_CONTENT_SWITCH)


@settings(max_examples=400, deadline=None)
@given(spans())
def test_the_content_switch_named_is_what_asking_every_family_says(nodes: list[SpanNode]) -> None:
    switches = Switches(REGISTRY)  # one per trajectory: its ancestors' answers are kept between calls
    for node in reversed(nodes):  # the deepest first, as calls sit under their runs
        assert switches.not_recorded(node).problem == _switch_by_asking_every_family(node)


def test_spans_of_one_shape_with_other_values_are_asked_again() -> None:
    """Same name and keys, another value of a key a family's runs are chosen by: not the first's answer."""
    keyed = [
        (key, sorted(values or ()))
        for f in REGISTRY.families
        if f.run_spans
        for key, values in f.run_spans.keys.items()
    ]
    key, accepted = next((key, values) for key, values in keyed if values)
    b = TreeBuilder()
    answers = []
    for value in ('not a run kind', *accepted):
        node = b.span('agent step', **{key: value})
        answers.append((REGISTRY.agent_run(node), _ask_every_family(node)))
    assert all(memoised == asked for memoised, asked in answers)
