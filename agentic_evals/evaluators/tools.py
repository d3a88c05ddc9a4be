"""Which tools were called, and with which arguments."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext

from ..scoring import diff_arguments, multiset_diff
from ..trajectory import ToolCall, Trajectory
from ._base import TrajectoryEvaluator

__all__ = ('ArgumentCorrectness', 'ArgumentMatchMode', 'ArgumentOccurrence', 'ToolCorrectness')

ArgumentMatchMode = Literal['exact', 'subset']
"""`'subset'`: every expected key is present with an equal value; `'exact'`: the same keys too."""

ArgumentOccurrence = Literal['first', 'last']
"""Which call to check when the tool was called several times (or a 0-based index)."""


def _counts(counter: Counter[str]) -> str:
    return ', '.join(f'{name!r} (x{count})' for name, count in sorted(counter.items()))


@dataclass(repr=False)
class ToolCorrectness(TrajectoryEvaluator):
    """Pass when the agent called exactly the expected tools, compared as a multiset.

    Order is ignored; repeats matter (`['search', 'search']` needs two calls). Drop-in for
    pydantic-evals' `ToolCorrectness`, plus `agent` / `include_subagents` scoping.

    Args:
        expected_tools: Tool names the agent should call, with repeats.
        allow_extra: Also pass when the agent called tools beyond the expected ones.
        include_failed: Count attempts that failed (raised, asked for a retry, invalid arguments).
        evaluation_name: Name shown in reports instead of the class name.
        agent: Score only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents of `agent`
            (of the top-level agent when `agent` is `None`).
    """

    expected_tools: list[str]
    allow_extra: bool = False
    include_failed: bool = False
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        called = trajectory.call_names(
            include_failed=self.include_failed, agent=self.agent, include_subagents=self.include_subagents
        )
        missing, extra = multiset_diff(self.expected_tools, called)
        problems: list[str] = []
        if missing:
            problems.append(f'missing tools: {_counts(missing)}')
        if extra and not self.allow_extra:
            problems.append(f'unexpected tools: {_counts(extra)}')
        if problems:
            return EvaluationReason(value=False, reason='; '.join(problems) + self.scope_suffix())
        summary = _counts(Counter(called)) if called else 'no tools'
        return EvaluationReason(value=True, reason=f'called {summary}{self.scope_suffix()}')


@dataclass(repr=False)
class ArgumentCorrectness(TrajectoryEvaluator):
    """Pass when one call of `tool_name` received the expected arguments.

    Only top-level keys are compared, each value with `==` (a nested dict must be equal as a
    whole). Drop-in for pydantic-evals' `ArgumentCorrectness`, plus agent scoping.

    Args:
        tool_name: The tool whose call is checked.
        expected_arguments: The expected argument names and values.
        match_mode: `'subset'` (default) allows extra keys in the call; `'exact'` does not.
        occurrence: `'first'`, `'last'` or a 0-based index among the tool's calls.
        include_failed: Consider failed attempts too; each attempt is its own occurrence.
        evaluation_name: Name shown in reports instead of the class name.
        agent: Consider only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
    """

    tool_name: str
    expected_arguments: dict[str, Any]
    match_mode: ArgumentMatchMode = 'subset'
    occurrence: ArgumentOccurrence | int = 'first'
    include_failed: bool = False
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        tool = self.tool_name
        matches = trajectory.calls(
            include_failed=self.include_failed, agent=self.agent, include_subagents=self.include_subagents, name=tool
        )
        scope = self.scope_suffix()
        if not matches:
            return EvaluationReason(value=False, reason=f'No calls to tool {tool!r} were recorded.{scope}')
        call = self._select(matches)
        if call is None:
            return EvaluationReason(
                value=False,
                reason=(
                    f'Tool {tool!r} was called {len(matches)} time(s); occurrence={self.occurrence!r} does not select '
                    "any of them (must be 'first', 'last', or a 0-based index; negative ints are not supported)."
                    + scope
                ),
            )
        if call.arguments is None:
            return EvaluationReason(value=False, reason=f'Tool {tool!r} arguments {call.arguments_problem}{scope}')
        problems = diff_arguments(call.arguments, self.expected_arguments, self.match_mode)
        if problems:
            return EvaluationReason(
                value=False, reason=f'Tool {tool!r} argument mismatch: {"; ".join(problems)}{scope}'
            )
        return EvaluationReason(value=True, reason=f'Tool {tool!r} called with {call.arguments!r}{scope}')

    def _select(self, matches: Sequence[ToolCall]) -> ToolCall | None:
        if self.occurrence == 'first':
            return matches[0]
        if self.occurrence == 'last':
            return matches[-1]
        # YAML and plain dataclasses do not validate the annotation, so check the type at run time.
        if isinstance(self.occurrence, int) and 0 <= self.occurrence < len(matches):
            return matches[self.occurrence]
        return None
