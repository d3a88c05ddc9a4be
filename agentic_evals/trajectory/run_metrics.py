"""The run metrics pydantic-evals records for a live case, counted from a recorded trace."""

from __future__ import annotations

from pydantic_evals.otel.span_tree import SpanTree


def span_tree_metrics(tree: SpanTree) -> dict[str, int | float]:
    """The metrics pydantic-evals counts from a live case's spans: `requests`, tokens, `cost`.

    Same rules as pydantic-evals' own (model-request spans with `gen_ai.request.model`; `chat`
    operations count as requests; numeric `gen_ai.usage.*` and `operation.cost` are summed), so a
    captured case reports what the live case did.
    """
    metrics: dict[str, int | float] = {}
    for node in tree:
        attributes = node.attributes
        if 'gen_ai.request.model' not in attributes:
            continue
        for key, value in attributes.items():
            if key == 'gen_ai.operation.name' and value == 'chat':
                metrics['requests'] = metrics.get('requests', 0) + 1
            elif not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            elif key == 'operation.cost':
                metrics['cost'] = metrics.get('cost', 0) + value
            elif key.startswith('gen_ai.usage.details.'):
                name = key.removeprefix('gen_ai.usage.details.')
                metrics[name] = metrics.get(name, 0) + value
            elif key.startswith('gen_ai.usage.'):
                name = key.removeprefix('gen_ai.usage.')
                metrics[name] = metrics.get(name, 0) + value
    return metrics
