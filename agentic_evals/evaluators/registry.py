"""The one list of our evaluator types: YAML loading, the CLI's known names and the public exports derive from it."""

from __future__ import annotations

from pydantic_evals.evaluators import Evaluator

from .budgets import MaxCost, MaxDuration, MaxFailedCalls, MaxModelRequests, MaxTokens, MaxToolCalls
from .judges.goal_accuracy import AgentGoalAccuracy
from .judges.topic_adherence import TopicAdherence
from .judges.trajectory_judge import TrajectoryJudge
from .order import TrajectoryMatch
from .permissions import NoLoops, ToolPermission
from .reference_calls import ToolCallAccuracy, ToolCallF1
from .tool_call_match import ToolCallMatch
from .tools import ArgumentCorrectness, ToolCorrectness

EVALUATOR_TYPES: tuple[type[Evaluator[object, object, object]], ...] = (
    AgentGoalAccuracy,
    ArgumentCorrectness,
    MaxCost,
    MaxDuration,
    MaxFailedCalls,
    MaxModelRequests,
    MaxTokens,
    MaxToolCalls,
    NoLoops,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCallMatch,
    ToolCorrectness,
    ToolPermission,
    TopicAdherence,
    TrajectoryJudge,
    TrajectoryMatch,
)
"""Every evaluator class we ship, sorted by name; a test checks `agentic_evals` exports exactly these."""


def evaluator_types() -> list[type[Evaluator[object, object, object]]]:
    """Our evaluator classes, for `Dataset.from_file(..., custom_evaluator_types=evaluator_types())`.

    They carry the built-ins' names, and pydantic-evals lets custom types override built-ins of the
    same name, so a dataset file written for the built-ins loads ours without edits.
    """
    return list(EVALUATOR_TYPES)
