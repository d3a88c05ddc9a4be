"""What pydantic-evals itself records on the spans of an evaluation."""

from __future__ import annotations

CASE_NAME = 'case_name'
"""On the span pydantic-evals opens for each case: the case's name."""
