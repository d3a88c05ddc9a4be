"""The run metrics pydantic-evals records for a live case, counted from a recorded trace."""

from __future__ import annotations

from pydantic_evals.otel.span_tree import SpanTree

from ..conventions.pydantic_evals import REQUESTS_METRIC
from ..conventions.registry import REGISTRY
from .extract import model_request_spans


def span_tree_metrics(tree: SpanTree) -> dict[str, int | float]:
    """The metrics of a live case, by pydantic-evals' names: `requests`, `input_tokens`, `cost`, ...

    Counted from the model requests of the tree's trajectory, with the tokens and cost the conventions
    read from them, so the metrics and the trajectory agree and nothing is counted twice: spans that
    repeat a run's totals (agent spans) are not requests. (pydantic-evals' own count adds usage from
    any span with `gen_ai.request.model` and counts only `chat` operations as requests.)
    """
    metrics: dict[str, int | float] = {}
    requests = model_request_spans(tree)
    if requests:
        metrics[REQUESTS_METRIC] = len(requests)
    for node in requests:
        for name, value in REGISTRY.usage(node).items():
            metrics[name] = metrics.get(name, 0) + value
    return metrics
