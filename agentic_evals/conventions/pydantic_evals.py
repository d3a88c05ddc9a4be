"""What pydantic-evals itself records on the spans of an evaluation."""

from __future__ import annotations

CASE_NAME = 'case_name'
"""On the span pydantic-evals opens for each case: the case's name."""
REQUESTS_METRIC = 'requests'
"""The metric pydantic-evals counts a case's model requests into (the others are named after the
usage attributes: `input_tokens`, `output_tokens`, `cost`, ...)."""
TASK_SPAN = 'execute {task}'
"""The span (logfire's message template as its name) pydantic-evals opens around a case's task, under
the case span; the evaluators' spans are its siblings, so a case's own spans are the ones beneath it."""
