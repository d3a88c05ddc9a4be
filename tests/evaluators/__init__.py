"""Helpers the evaluator tests share."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import Evaluator

from agentic_evals import evaluator_types


def write_dataset(path: Path, evaluators: Sequence[Evaluator[object, object, object]]) -> None:
    """A one-case dataset with `evaluators`, written to `path` (YAML or JSON by its suffix)."""
    dataset = Dataset[object, object, object](name='d', cases=[Case(name='c', inputs='x')], evaluators=list(evaluators))
    dataset.to_file(path, custom_evaluator_types=evaluator_types())


def read_dataset(path: Path) -> Dataset[object, object, object]:
    """A dataset file read back with our evaluator types."""
    return Dataset[object, object, object].from_file(path, custom_evaluator_types=evaluator_types())
