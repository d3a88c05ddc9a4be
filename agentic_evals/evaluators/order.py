"""In which order the tools were called."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext

from ..scoring import lcs_score, multiset_score
from ..trajectory import Trajectory
from ._base import EvaluationValue, TrajectoryEvaluator

__all__ = ('TrajectoryMatch', 'TrajectoryOrder')

TrajectoryOrder = Literal['exact', 'in_order', 'any_order']
"""`'exact'`: 1.0 when equal else 0.0; `'in_order'`: F1 of the longest common subsequence;
`'any_order'`: F1 of the multiset intersection."""


@dataclass(repr=False)
class TrajectoryMatch(TrajectoryEvaluator):
    """Score the sequence of tool names against an expected one, from 0.0 to 1.0.

    Precision is matched / actual calls, recall is matched / expected calls, the score their F1;
    both empty scores 1.0, one empty 0.0. Drop-in for pydantic-evals' `TrajectoryMatch`, plus agent
    scoping and a bit-parallel LCS that stays fast on long trajectories.

    Args:
        expected_trajectory: The expected tool names, in order.
        order: `'in_order'` (default), `'exact'` or `'any_order'` (see `TrajectoryOrder`).
        include_failed: Include attempts that failed.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Score only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
    """

    expected_trajectory: list[str]
    order: TrajectoryOrder = 'in_order'
    include_failed: bool = False
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True

    @property
    def failing_value(self) -> EvaluationValue:
        return 0.0

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        actual = trajectory.call_names(
            include_failed=self.include_failed, agent=self.agent, include_subagents=self.include_subagents
        )
        expected = list(self.expected_trajectory)
        scope = self.scope_suffix()
        if self.order == 'exact':
            if actual == expected:
                return EvaluationReason(value=1.0, reason=f'actual trajectory matches expected: {actual!r}{scope}')
            return EvaluationReason(
                value=0.0, reason=f'actual trajectory {actual!r} does not equal expected {expected!r}{scope}'
            )
        if not actual and not expected:
            return EvaluationReason(value=1.0, reason=f'both actual and expected trajectories are empty{scope}')
        if self.order == 'any_order':
            result, label = multiset_score(expected, actual), 'multiset overlap'
        else:
            result, label = lcs_score(expected, actual), 'LCS'
        return EvaluationReason(
            value=result.value,
            reason=f'{result.describe(label)} (expected: {expected!r}, actual: {actual!r}){scope}',
        )
