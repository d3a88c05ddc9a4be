"""Score a span tree without a Dataset: build the context pydantic-evals would build for a case."""

from __future__ import annotations

from typing import Any

from pydantic_evals.evaluators import EvaluatorContext
from pydantic_evals.otel import SpanTree, SpanTreeRecordingError

from ..capturing import Capture


def evaluator_context(
    tree: SpanTree | SpanTreeRecordingError | Capture,
    *,
    inputs: Any = None,
    output: Any = None,
    expected_output: Any = None,
    metadata: Any = None,
    metrics: dict[str, int | float] | None = None,
    name: str | None = None,
    duration: float = 0.0,
) -> EvaluatorContext[Any, Any, Any]:
    """An `EvaluatorContext` around `tree`, for calling `evaluator.evaluate(ctx)` directly.

    Use it with `capture()` or a loaded trace, where no Dataset runs the task. A `Capture` that
    could not record (or a `SpanTreeRecordingError`) gives the context an evaluator sees when spans
    were not recorded, so evaluators report why instead of raising.
    """
    if isinstance(tree, Capture):
        tree = tree.error if tree.error is not None else tree.tree
    return EvaluatorContext(
        name=name,
        inputs=inputs,
        metadata=metadata,
        expected_output=expected_output,
        output=output,
        duration=duration,
        _span_tree=tree,
        attributes={},
        metrics=dict(metrics or {}),
    )
