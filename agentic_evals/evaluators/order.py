"""In which order the tools were called."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext

from ..scoring.metrics import trajectory_match, trajectory_match_of
from ..trajectory.trajectory import Trajectory
from . import _checks as checks
from ._base import ConversationSource, ScoreEvaluator, as_reason, prepared_names

TrajectoryOrder = Literal['exact', 'in_order', 'any_order']
"""`'exact'`: 1.0 when equal else 0.0; `'in_order'`: F1 of the longest common subsequence;
`'any_order'`: F1 of the multiset intersection."""


@dataclass(repr=False)
class TrajectoryMatch(ScoreEvaluator):
    """Score the sequence of tool names against an expected one, from 0.0 to 1.0.

    Precision is matched / actual calls, recall is matched / expected calls, the score their F1;
    both empty scores 1.0, one empty 0.0. Drop-in for pydantic-evals' `TrajectoryMatch`, plus agent
    scoping and a bit-parallel LCS that stays fast on long trajectories.

    Args:
        expected_trajectory: The expected tool names, in order; or a list of such lists, one per turn
            of a multi-turn case (the score is then the mean of the turns' scores).
        order: `'in_order'` (default), `'exact'` or `'any_order'` (see `TrajectoryOrder`).
        include_failed: Include attempts that failed.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Score only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
        conversation: Score the conversation in the case's `'output'` or `'inputs'` (pydantic-ai
            messages, OpenAI chat messages or ragas messages) instead of the spans.
        threshold: Also report the assertion `<name>_pass`: whether the score is at least this.
    """

    expected_trajectory: list[str] | list[list[str]]
    order: TrajectoryOrder = 'in_order'
    include_failed: bool = False
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None
    threshold: float | None = None

    def problems(self) -> list[str | None]:
        return [
            _expected_problem(self.expected_trajectory),
            checks.choice('order', self.order, ('in_order', 'exact', 'any_order')),
            checks.flag('include_failed', self.include_failed),
        ]

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        expected = prepared_names(self, 'expected_trajectory')
        if expected is not None:
            value, reason = trajectory_match_of(
                trajectory, expected, self.order, self.include_failed, self.agent, self.include_subagents
            )
            return EvaluationReason(value=value, reason=reason)
        return as_reason(  # expected per turn
            trajectory_match(
                trajectory,
                self.expected_trajectory,
                order=self.order,
                include_failed=self.include_failed,
                **self.scope(),
            )
        )


def _expected_problem(expected: object) -> str | None:
    """Tool names, or lists of them (one per turn)."""
    if isinstance(expected, list) and expected and all(isinstance(turn, list) for turn in expected):
        found = [checks.texts(f'expected_trajectory turn {n}', turn) for n, turn in enumerate(expected, start=1)]
        return next((problem for problem in found if problem is not None), None)
    return checks.texts('expected_trajectory', expected)
