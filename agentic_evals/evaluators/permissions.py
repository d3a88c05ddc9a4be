"""Whether the agent kept to the tools it may use, and whether it went round in circles."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext

from ..scoring.checks import loop_problems, no_loops, permission_problems, tool_permission
from ..trajectory.trajectory import Trajectory
from . import _checks as checks
from ._base import ConversationSource, TrajectoryEvaluator, as_reason


@dataclass(repr=False)
class ToolPermission(TrajectoryEvaluator):
    """Pass when every tool call in scope is permitted; fail naming each offending tool, its agent
    and how many times it was called.

    A call must satisfy the top-level rules and the rules of the agent that made it, so an agent's
    rules only narrow the top-level ones (a contradiction between them is a construction error).
    Failed attempts count by default: attempting a forbidden tool is the violation, whether or not
    it ran.

    Args:
        allowed: The only tools any agent may call; `None` allows every tool not forbidden.
        forbidden: Tools no agent may call.
        agents: Per-agent rules, `{agent: {allowed: [...], forbidden: [...]}}`, for the calls that
            agent makes itself (not its sub-agents').
        include_failed: Check failed attempts too (default `True`).
        evaluation_name: Name shown in reports instead of the class name.
        agent: Check only the calls of the agent with this name (and its sub-agents').
        include_subagents: With `False`, leave out calls made by sub-agents.
        conversation: Check the conversation in the case's `'output'` or `'inputs'` instead of the spans.
    """

    allowed: list[str] | None = None
    forbidden: list[str] | None = None
    agents: dict[str, dict[str, list[str]]] | None = None
    include_failed: bool = True
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        return [
            *permission_problems(self.allowed, self.forbidden, self.agents),
            checks.flag('include_failed', self.include_failed),
        ]

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return as_reason(
            tool_permission(
                trajectory,
                self.allowed,
                self.forbidden,
                agents=self.agents,
                include_failed=self.include_failed,
                **self.scope(),
            )
        )


@dataclass(repr=False)
class NoLoops(TrajectoryEvaluator):
    """Pass when no agent repeated itself; fail naming each loop: its calls, the call it starts at
    and how many times it ran.

    Calls are the same when they have the same name and arguments (compared as `canonical_json`,
    so key order and `1` vs `1.0` do not matter); a call whose arguments were not recorded equals
    none. Each agent's own calls are checked as a sequence of their own. The defaults allow one
    retry of a call and one repetition of a cycle; the scan is linear in the number of calls for
    each cycle length.

    Args:
        max_repeats: How many times in a row one call may be made (default 2: the call and one retry).
        max_cycle_length: The longest cycle of calls looked for (default 3; 1 looks for none).
        max_cycle_repeats: How many times in a row a cycle of 2 to `max_cycle_length` calls may
            run (default 2: `search, fetch, search, fetch` passes, a third round fails).
        include_failed: Count failed attempts (default `True`: retrying the same failing call is a loop).
        evaluation_name: Name shown in reports instead of the class name.
        agent: Check only the calls of the agent with this name (and its sub-agents', each on its own).
        include_subagents: With `False`, leave out calls made by sub-agents.
        conversation: Check the conversation in the case's `'output'` or `'inputs'` instead of the spans.
    """

    max_repeats: int = 2
    max_cycle_length: int = 3
    max_cycle_repeats: int = 2
    include_failed: bool = True
    evaluation_name: str | None = field(default=None)
    agent: str | None = None
    include_subagents: bool = True
    conversation: ConversationSource | None = None

    def problems(self) -> list[str | None]:
        return [
            *loop_problems(self.max_repeats, self.max_cycle_length, self.max_cycle_repeats),
            checks.flag('include_failed', self.include_failed),
        ]

    def score(self, trajectory: Trajectory, ctx: EvaluatorContext[object, object, object]) -> EvaluationReason:
        return as_reason(
            no_loops(
                trajectory,
                self.max_repeats,
                max_cycle_length=self.max_cycle_length,
                max_cycle_repeats=self.max_cycle_repeats,
                include_failed=self.include_failed,
                **self.scope(),
            )
        )
