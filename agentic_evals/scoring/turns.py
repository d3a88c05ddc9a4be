"""Scoring a conversation turn by turn: one expectation per turn, each scored alone, and their mean.

ADK scores a multi-turn case this way (`tool_trajectory_avg_score`): the mean of the turns' values,
a match counting 1 and a mismatch 0. Turns beyond the expected ones, and expected turns the
conversation never reached, score 0, so a conversation that stops early cannot pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from ..trajectory.trajectory import Trajectory


class Scored(Protocol):
    """A metric's result (`MetricResult` is one)."""

    @property
    def value(self) -> bool | float: ...

    @property
    def reason(self) -> str: ...


E = TypeVar('E')
R = TypeVar('R', bound=Scored)


def score_turns(
    trajectory: Trajectory, expected: Sequence[E], score_turn: Callable[[Trajectory, E], R]
) -> tuple[float, str, list[R]]:
    """`(mean, reason, each turn's result)` over `trajectory.turns()` against `expected`, in order."""
    turns = trajectory.turns()
    results: list[R] = []
    lines: list[str] = []
    values: list[float] = []
    for number in range(1, max(len(turns), len(expected)) + 1):
        if number > len(expected):
            lines.append(f'turn {number}: not expected ({len(expected)} expected)')
            values.append(0.0)
        elif number > len(turns):
            lines.append(f'turn {number}: expected, but the conversation has {len(turns)} turn(s)')
            values.append(0.0)
        else:
            result = score_turn(turns[number - 1], expected[number - 1])
            results.append(result)
            lines.append(f'turn {number}: {result.reason}')
            values.append(float(result.value))
    mean = sum(values) / len(values) if values else 1.0
    matched = sum(1 for v in values if v == 1.0)
    head = f'{len(values)} turn(s), {matched} fully matched, mean={mean:.3f}'
    return mean, '; '.join([head, *lines]), results
