"""The walk's breaks: every position whose call is not known to follow the previous one in issue order.

By definition a call at `k > 0` follows call `k - 1` when both have one parent, their framework starts a
response's calls in issue order (pydantic-ai's tool spans; a plain GenAI instrumentation's need not),
and it started strictly later. A call rejected by validation is no break: its own rule puts it back.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_evals.otel.span_tree import SpanNode

from agentic_evals.conventions.registry import REGISTRY
from agentic_evals.trajectory.walk import SPAN, walk

from ..factories import TreeBuilder


@st.composite
def runs_of_calls(draw: st.DrawFn) -> list[SpanNode]:
    """Tool spans under a few parents, each parent's of one instrumentation, some starting together,
    some rejected by validation."""
    b = TreeBuilder()
    parents = [b.span(f'step {i}') for i in range(draw(st.integers(1, 3)))]
    generic = {id(p): draw(st.booleans()) for p in parents}
    clock = 10
    for _ in range(draw(st.integers(0, 12))):
        parent = draw(st.sampled_from(parents))
        clock += draw(st.sampled_from([0, 0, 1, 2]))  # a tie says nothing of the order
        b.generic = generic[id(parent)]
        rejected = draw(st.booleans()) and not b.generic
        extra = {'logfire.msg': 'running tool: a', 'pydantic_ai.tool.failure_stage': 'validation'} if rejected else {}
        b.tool(draw(st.sampled_from(['a', 'b'])), parent, start=clock, status='error' if rejected else 'unset', **extra)
    b.build()  # links each span to its parent
    return b.nodes


@settings(max_examples=400, deadline=None)
@given(runs_of_calls())
def test_the_breaks_are_where_a_call_is_not_known_to_follow_the_previous_one(nodes: list[SpanNode]) -> None:
    walked = walk(nodes)
    spans = [call[SPAN] for call in walked.calls]
    expected = [
        k
        for k, span in enumerate(spans)
        if k == 0
        or span.parent is not spans[k - 1].parent
        or not REGISTRY.starts_in_issue_order(span)
        or not spans[k - 1].start_timestamp < span.start_timestamp
    ]
    assert walked.breaks == expected
