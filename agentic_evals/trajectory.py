"""What an agent did, as plain records extracted once from a pydantic-evals `SpanTree`.

`agentic_evals.extract.extract_trajectory(tree)` builds a `Trajectory`: every tool call attempt
(with its status, failure stage, agent and parsed arguments), every model request (with tokens and
cost) and every agent run. Evaluators, the CLI and user code read these records and never touch
spans themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

__all__ = (
    'AgentRun',
    'CallStatus',
    'FailureStage',
    'ModelRequest',
    'ToolCall',
    'Trajectory',
)

CallStatus = Literal['ok', 'failed', 'deferred']
"""`ok`: the tool ran and returned; `failed`: the attempt ended in an error; `deferred`: the tool
asked for approval or external execution (`ApprovalRequired` / `CallDeferred`) and did not run."""

FailureStage = Literal['validation', 'retry', 'raised']
"""Where a failed attempt failed: its arguments did not validate, the tool asked the model to
retry (`ModelRetry`), or the tool raised any other exception."""


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
    """The enclosing agent runs, outermost first; ends with `agent`."""
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
        if agent is None:
            return include_subagents or len(self.agent_path) <= 1
        if include_subagents:
            return agent in self.agent_path
        return self.agent == agent


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
        if agent is None:
            return include_subagents or len(self.agent_path) <= 1
        if include_subagents:
            return agent in self.agent_path
        return self.agent == agent


@dataclass(frozen=True)
class AgentRun:
    """One agent run span; nested runs are sub-agents (e.g. agent-as-tool delegation)."""

    name: str
    path: tuple[str, ...]
    span_id: int
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Trajectory:
    """Everything extracted from one span tree, in the order things happened."""

    tool_calls: tuple[ToolCall, ...] = ()
    """Every tool call attempt, output functions and deferred calls included, in call order."""
    model_requests: tuple[ModelRequest, ...] = ()
    agents: tuple[AgentRun, ...] = ()
    notes: tuple[str, ...] = field(default=())
    """Spans that looked like tool calls but could not be read, with the reason they were skipped."""

    def calls(
        self, *, include_failed: bool = False, agent: str | None = None, include_subagents: bool = True
    ) -> list[ToolCall]:
        """The tool calls an evaluator scores: never output functions or deferred calls.

        Failed attempts count only with `include_failed`; `agent` narrows to one agent's calls.
        """
        return [
            call
            for call in self.tool_calls
            if not call.is_output_function
            and call.status != 'deferred'
            and (include_failed or call.status == 'ok')
            and call.made_by(agent, include_subagents=include_subagents)
        ]

    def requests(self, *, agent: str | None = None, include_subagents: bool = True) -> list[ModelRequest]:
        """The model requests made by `agent` (every agent when `None`)."""
        return [r for r in self.model_requests if r.made_by(agent, include_subagents=include_subagents)]

    @property
    def agent_names(self) -> list[str]:
        """Distinct agent names, sorted."""
        return sorted({run.name for run in self.agents})

    def has_agent(self, name: str) -> bool:
        return (
            any(run.name == name for run in self.agents)
            or any(name in call.agent_path for call in self.tool_calls)
            or any(name in request.agent_path for request in self.model_requests)
        )
