"""A trajectory as text, for an LLM judge to read (and for people to read in reports).

The format is deterministic: no timings, span ids or run ids, so the same run renders the same way
every time and a judge's prompt can be asserted whole in tests.
"""

from __future__ import annotations

import json

from .records import ModelRequest, ToolCall
from .trajectory import Trajectory

NO_TRAJECTORY = 'no trajectory recorded'
"""What a judge is shown instead of a trajectory when the case has no span tree."""

_FAILURE_STAGES = {
    'validation': 'its arguments did not validate',
    'retry': 'the tool asked the model to retry',
    'raised': 'the tool raised an exception',
}


def render_trajectory(
    trajectory: Trajectory,
    *,
    agent: str | None = None,
    include_subagents: bool = True,
    max_result_chars: int = 500,
) -> str:
    """Render the agents, model requests and every tool call attempt of `trajectory` as lines of text.

    Unlike the deterministic evaluators, this shows failed and deferred attempts and output
    functions too, each marked: a judge can only weigh a failure it is shown. `agent` and
    `include_subagents` narrow what is shown exactly as they narrow the evaluators' scoring.
    Results longer than `max_result_chars` are cut, saying how much was left out.

    Example output:

        agents: main, main > expert
        model requests: 3 (main_model x2, expert_model x1); tokens: 120 input, 30 output
        tool calls: 2
        1. [main] search -> ok
           arguments: {"query": "spans"}
           result: ["https://example.com/spans"]
        2. [main > expert] lookup -> failed: the tool asked the model to retry
           arguments: {"term": "x"}
           result: unknown term, try again
    """
    calls = [c for c in trajectory.tool_calls if c.made_by(agent, include_subagents=include_subagents)]
    requests = trajectory.requests(agent=agent, include_subagents=include_subagents)
    lines: list[str] = []
    if agent is not None or not include_subagents:
        subagents = 'included' if include_subagents else 'excluded'
        who = f'agent {agent!r}' if agent is not None else 'the top-level agents'
        lines.append(f'scope: {who}, sub-agents {subagents}')
    paths = _agent_paths(trajectory, calls, requests, agent=agent, include_subagents=include_subagents)
    lines.append(f'agents: {", ".join(paths) if paths else "none recorded"}')
    lines.append(_requests_line(requests))
    lines.append(f'tool calls: {len(calls) if calls else "none"}')
    for number, call in enumerate(calls, start=1):
        lines.extend(_call_lines(number, call, max_result_chars))
    for note in trajectory.notes:
        lines.append(f'skipped span: {note}')
    return '\n'.join(lines)


def _agent_paths(
    trajectory: Trajectory,
    calls: list[ToolCall],
    requests: list[ModelRequest],
    *,
    agent: str | None,
    include_subagents: bool,
) -> list[str]:
    """Distinct agent paths in scope, in order of first appearance."""
    seen: dict[tuple[str, ...], None] = {}
    for run in trajectory.agents:
        in_scope = (
            (include_subagents or len(run.path) <= 1)
            if agent is None
            else (agent in run.path if include_subagents else run.name == agent)
        )
        if in_scope:
            seen.setdefault(run.path, None)
    for path in [c.agent_path for c in calls] + [r.agent_path for r in requests]:
        if path:
            seen.setdefault(path, None)
    return [' > '.join(path) for path in seen]


def _requests_line(requests: list[ModelRequest]) -> str:
    if not requests:
        return 'model requests: none'
    per_model: dict[str, int] = {}
    for request in requests:
        name = request.model or 'unknown model'
        per_model[name] = per_model.get(name, 0) + 1
    models = ', '.join(f'{name} x{count}' for name, count in per_model.items())
    line = (
        f'model requests: {len(requests)} ({models}); tokens: {sum(r.input_tokens for r in requests)} input,'
        f' {sum(r.output_tokens for r in requests)} output'
    )
    costs = [r.cost for r in requests if r.cost is not None]
    if costs:
        line += f'; cost: {sum(costs):.6f}'
    return line


def _call_lines(number: int, call: ToolCall, max_result_chars: int) -> list[str]:
    where = ' > '.join(call.agent_path) or 'no agent'
    if call.status == 'failed':
        stage = _FAILURE_STAGES.get(call.failure_stage or '', 'the attempt ended in an error')
        status = f'failed: {stage}'
    elif call.status == 'deferred':
        status = 'deferred: waiting for approval or external execution, did not run'
    elif call.is_output_function:
        status = 'ok (output function: its return value is the final output)'
    else:
        status = 'ok'
    lines = [f'{number}. [{where}] {call.name} -> {status}']
    if call.arguments is not None:
        lines.append(f'   arguments: {json.dumps(call.arguments, ensure_ascii=False)}')
    else:
        # `arguments_problem` is phrased to follow the word "arguments".
        lines.append(f'   arguments {call.arguments_problem or "not recorded"}')
    if call.result is not None:
        lines.append(f'   result: {_truncate(call.result, max_result_chars)}')
    elif call.status != 'deferred':
        lines.append('   result: not recorded')
    return lines


def _truncate(text: str, limit: int) -> str:
    # One line per field keeps the call list readable; a judge reads `\n` fine.
    one_line = text.replace('\r\n', '\n').replace('\n', '\\n')
    if len(one_line) <= limit:
        return one_line
    return f'{one_line[:limit]}... ({len(one_line) - limit} more characters)'
