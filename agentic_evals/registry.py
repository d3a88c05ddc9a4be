"""The evaluator types to hand to pydantic-evals when loading a dataset from YAML or JSON."""

from __future__ import annotations

from pydantic_evals.evaluators import Evaluator

from .evaluators import (
    ArgumentCorrectness,
    MaxModelRequests,
    MaxToolCalls,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCorrectness,
    TrajectoryMatch,
)
from .evaluators.judges import AgentGoalAccuracy, TopicAdherence, TrajectoryJudge

__all__ = ('evaluator_types',)


def evaluator_types() -> list[type[Evaluator[object, object, object]]]:
    """Our evaluator classes, for `Dataset.from_file(..., custom_evaluator_types=evaluator_types())`.

    They carry the built-ins' names, and pydantic-evals lets custom types override built-ins of the
    same name, so a dataset file written for the built-ins loads ours without edits.
    """
    return [
        AgentGoalAccuracy,
        ArgumentCorrectness,
        MaxModelRequests,
        MaxToolCalls,
        ToolCallAccuracy,
        ToolCallF1,
        ToolCorrectness,
        TopicAdherence,
        TrajectoryJudge,
        TrajectoryMatch,
    ]
