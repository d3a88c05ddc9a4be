"""Fixtures of the judge tests (the importable helpers are in `scripted.py`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from pydantic_evals.evaluators.llm_as_a_judge import set_default_judge_model
from pydantic_evals.otel import SpanTree
from scenario import run_scenario

from agentic_evals import capture
from agentic_evals.evaluators.judges.base import default_judge_model


@pytest.fixture(scope='session')
def scenario_tree() -> SpanTree:
    """The span tree of a real run of the scripted scenario (main, an expert sub-agent, a crasher)."""
    provider = TracerProvider()
    with capture(provider) as captured:
        run_scenario(version=5, tracer_provider=provider)
    return captured.tree


@pytest.fixture
def default_model() -> Iterator[None]:
    """Restore pydantic-evals' default judge model after a test that sets it."""
    before = default_judge_model()
    yield
    set_default_judge_model(before)  # type: ignore[arg-type]
