"""The records a trajectory is made of: tool calls, model requests, agent runs.

Plain frozen dataclasses with no knowledge of spans, so scoring code and users' code can build
and compare them freely. (`FailureStage` and `CallKind` are defined with the conventions, whose
families answer them, and re-exported here.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, NamedTuple

from ..conventions.family import CallKind as CallKind
from ..conventions.family import FailureStage as FailureStage

CallStatus = Literal['ok', 'failed', 'deferred']
"""`ok`: the tool ran and returned; `failed`: the attempt ended in an error; `deferred`: the tool
asked for approval or external execution (`ApprovalRequired` / `CallDeferred`) and did not run."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call attempt, as recorded by one tool span."""

    name: str
    arguments: dict[str, Any] | None
    """The parsed arguments when they were recorded and are a JSON object, else `None`."""
    raw_arguments: str | None
    """The arguments exactly as recorded (a JSON string, or the model's invalid text)."""
    arguments_problem: str | None
    """Why `arguments` is `None`, phrased to follow `Tool 'name' arguments ...`; `None` when parsed."""
    call_id: str | None
    result: str | None
    status: CallStatus
    failure_stage: FailureStage | None
    agent: str | None
    """The agent that made the call: the nearest enclosing agent run."""
    agent_path: tuple[str, ...]
    """The enclosing agent runs, outermost first; ends with `agent` (at most 64 names: deeper runs
    keep the outermost 63 and their own)."""
    start: datetime
    end: datetime
    span_id: int
    issued_by: int | None = None
    """Index in `Trajectory.model_requests` of the model response that issued this call, when that
    response's output messages were recorded."""
    is_output_function: bool = False
    """An output function runs through the tool machinery but produces the run's output; evaluators
    never count it as a tool call."""

    @property
    def duration(self) -> timedelta:
        return self.end - self.start

    def made_by(self, agent: str | None, *, include_subagents: bool) -> bool:
        """Whether this call belongs to `agent` (any agent when `None`) under the sub-agent rule.

        With `include_subagents=False` only the agent's own calls count; for `agent=None` that means
        the calls of the outermost agent runs.
        """
        return belongs_to(self.agent_path, agent, include_subagents)


@dataclass(frozen=True)
class ModelRequest:
    """One request to a model, as recorded by one model-request (chat) span."""

    model: str | None
    operation: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float | None
    agent: str | None
    agent_path: tuple[str, ...]
    start: datetime
    end: datetime
    span_id: int

    def made_by(self, agent: str | None, *, include_subagents: bool) -> bool:
        """Same attribution rule as `ToolCall.made_by`."""
        return belongs_to(self.agent_path, agent, include_subagents)


@dataclass(frozen=True)
class AgentRun:
    """One agent run span; nested runs are sub-agents (e.g. agent-as-tool delegation)."""

    name: str
    path: tuple[str, ...]
    span_id: int
    start: datetime
    end: datetime


def belongs_to(path: tuple[str, ...], agent: str | None, include_subagents: bool) -> bool:
    """The attribution rule shared by calls and requests (see `ToolCall.made_by`)."""
    if agent is None:
        return include_subagents or len(path) <= 1
    if include_subagents:
        return agent in path
    return bool(path) and path[-1] == agent


class AgentStructure(NamedTuple):
    """Who did what: the agent runs, and the agent path of each call and each request (by position)."""

    agents: tuple[AgentRun, ...]
    call_paths: list[tuple[str, ...]]
    request_paths: list[tuple[str, ...]]
