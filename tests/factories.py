"""Hand-built span trees for the edge cases a real run cannot produce.

Spans mimic pydantic-ai instrumentation version 5 unless a test says otherwise: an
`invoke_agent NAME` span, `chat MODEL` spans and `execute_tool NAME` spans.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from pydantic_evals.evaluators import EvaluatorContext
from pydantic_evals.otel import SpanTree, SpanTreeRecordingError
from pydantic_evals.otel.span_tree import AttributeValue, SpanNode, SpanStatus

from agentic_evals import evaluator_context

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dataclass
class TreeBuilder:
    """Appends spans with strictly increasing timestamps; `build()` returns the `SpanTree`."""

    trace_id: int = 1
    generic: bool = False
    """Tool spans as a plain GenAI instrumentation writes them, without pydantic-ai's `logfire.msg`
    (pydantic-ai starts a response's calls in issue order; other frameworks need not)."""
    nodes: list[SpanNode] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _clock: itertools.count[int] = field(default_factory=lambda: itertools.count(0))

    def span(
        self,
        name: str,
        parent: SpanNode | None = None,
        *,
        status: SpanStatus = 'unset',
        start: int | None = None,
        **attributes: AttributeValue,
    ) -> SpanNode:
        tick = next(self._clock) if start is None else start
        node = SpanNode(
            name=name,
            trace_id=self.trace_id,
            span_id=next(self._ids),
            parent_span_id=parent.span_id if parent else None,
            start_timestamp=EPOCH + timedelta(milliseconds=tick),
            end_timestamp=EPOCH + timedelta(milliseconds=tick, microseconds=500),
            attributes=dict(attributes),
            status=status,
        )
        self.nodes.append(node)
        return node

    def agent(self, name: str, parent: SpanNode | None = None) -> SpanNode:
        return self.span(
            f'invoke_agent {name}', parent, **{'gen_ai.agent.name': name, 'gen_ai.operation.name': 'invoke_agent'}
        )

    def tool(
        self,
        name: str | Any,
        parent: SpanNode | None = None,
        *,
        arguments: Any = None,
        status: SpanStatus = 'unset',
        call_id: str | None = None,
        start: int | None = None,
        **attributes: AttributeValue,
    ) -> SpanNode:
        attrs: dict[str, Any] = {'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name}
        if not self.generic:
            attrs['logfire.msg'] = f'running tool: {name}'
        if arguments is not None:
            attrs['gen_ai.tool.call.arguments'] = arguments if isinstance(arguments, str) else json.dumps(arguments)
        if call_id is not None:
            attrs['gen_ai.tool.call.id'] = call_id
        attrs.update(attributes)
        return self.span(f'execute_tool {name}', parent, status=status, start=start, **attrs)

    def chat(
        self, parent: SpanNode | None = None, *, issued: Sequence[str] = (), **attributes: AttributeValue
    ) -> SpanNode:
        attrs: dict[str, Any] = {'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'test-model'}
        if issued:
            parts = [{'type': 'tool_call', 'id': call_id, 'name': 'x', 'arguments': {}} for call_id in issued]
            attrs['gen_ai.output.messages'] = json.dumps([{'role': 'assistant', 'parts': parts}])
        attrs.update(attributes)
        return self.span('chat test-model', parent, **attrs)

    def build(self) -> SpanTree:
        tree = SpanTree()
        tree.add_spans(self.nodes)
        return tree


def tree_of_tools(*names: str, agent: str = 'main') -> SpanTree:
    """A single agent run calling `names` in order, each successfully."""
    b = TreeBuilder()
    root = b.agent(agent)
    for name in names:
        b.tool(name, root, arguments={})
    return b.build()


def context(
    tree: SpanTree | SpanTreeRecordingError, *, metrics: dict[str, int | float] | None = None
) -> EvaluatorContext[object, object, object]:
    """An evaluator context around `tree`, as pydantic-evals builds one for a case."""
    return evaluator_context(tree, name='case', metrics=metrics)
