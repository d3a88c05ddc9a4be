"""Score what an AI agent did from the OpenTelemetry spans it already emits.

The names below are imported on first use (PEP 562), so `import agentic_evals` and the command
line's `--help` stay fast: pydantic-evals, pydantic-ai and OpenTelemetry load only when a name
that needs them is read.

The imports under `TYPE_CHECKING` are the one list of public names (`from .module import Name as
Name`, the explicit re-export type checkers read); `_EXPORTS` and `__all__` are read from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .capturing import Capture as Capture
    from .capturing import capture as capture
    from .conversations import ConversationFormat as ConversationFormat
    from .conversations import trajectory_from_messages as trajectory_from_messages
    from .engines.api import evaluate_trace_files as evaluate_trace_files
    from .errors import AgenticEvalsError as AgenticEvalsError
    from .errors import FileError as FileError
    from .evaluators._base import ConversationSource as ConversationSource
    from .evaluators.budgets import MaxCost as MaxCost
    from .evaluators.budgets import MaxDuration as MaxDuration
    from .evaluators.budgets import MaxFailedCalls as MaxFailedCalls
    from .evaluators.budgets import MaxModelRequests as MaxModelRequests
    from .evaluators.budgets import MaxTokens as MaxTokens
    from .evaluators.budgets import MaxToolCalls as MaxToolCalls
    from .evaluators.judges.goal_accuracy import AgentGoalAccuracy as AgentGoalAccuracy
    from .evaluators.judges.topic_adherence import TopicAdherence as TopicAdherence
    from .evaluators.judges.topic_adherence import TopicAdherenceMode as TopicAdherenceMode
    from .evaluators.judges.trajectory_judge import TrajectoryJudge as TrajectoryJudge
    from .evaluators.order import TrajectoryMatch as TrajectoryMatch
    from .evaluators.order import TrajectoryOrder as TrajectoryOrder
    from .evaluators.permissions import NoLoops as NoLoops
    from .evaluators.permissions import ToolPermission as ToolPermission
    from .evaluators.reference_calls import ToolCallAccuracy as ToolCallAccuracy
    from .evaluators.reference_calls import ToolCallF1 as ToolCallF1
    from .evaluators.registry import evaluator_types as evaluator_types
    from .evaluators.tool_call_match import ToolCallMatch as ToolCallMatch
    from .evaluators.tools import ArgumentCorrectness as ArgumentCorrectness
    from .evaluators.tools import ArgumentMatchMode as ArgumentMatchMode
    from .evaluators.tools import ArgumentOccurrence as ArgumentOccurrence
    from .evaluators.tools import ToolCorrectness as ToolCorrectness
    from .offline.context import evaluator_context as evaluator_context
    from .offline.evaluate import evaluate_traces as evaluate_traces
    from .offline.evaluate import evaluate_traces_sync as evaluate_traces_sync
    from .offline.matching import AmbiguousTraceError as AmbiguousTraceError
    from .reports.document import ReportDocument as ReportDocument
    from .reports.gates import Gates as Gates
    from .reports.gates import MaxMetric as MaxMetric
    from .reports.gates import MinScore as MinScore
    from .scoring.argument_rules import ArgumentsMode as ArgumentsMode
    from .scoring.call_matching import canonical_json as canonical_json
    from .scoring.checks import max_cost as max_cost
    from .scoring.checks import max_duration as max_duration
    from .scoring.checks import max_failed_calls as max_failed_calls
    from .scoring.checks import max_tokens as max_tokens
    from .scoring.checks import no_loops as no_loops
    from .scoring.checks import tool_permission as tool_permission
    from .scoring.metrics import MetricResult as MetricResult
    from .scoring.metrics import argument_correctness as argument_correctness
    from .scoring.metrics import max_model_requests as max_model_requests
    from .scoring.metrics import max_tool_calls as max_tool_calls
    from .scoring.metrics import tool_call_accuracy as tool_call_accuracy
    from .scoring.metrics import tool_call_f1 as tool_call_f1
    from .scoring.metrics import tool_correctness as tool_correctness
    from .scoring.metrics import trajectory_match as trajectory_match
    from .scoring.tool_call_match import ToolCallMatchMode as ToolCallMatchMode
    from .scoring.tool_call_match import ToolCallMatchResult as ToolCallMatchResult
    from .scoring.tool_call_match import tool_call_match as tool_call_match
    from .testing import assert_trajectory as assert_trajectory
    from .traces import LoadedTrace as LoadedTrace
    from .traces import OtlpJsonFileExporter as OtlpJsonFileExporter
    from .traces import load_traces as load_traces
    from .traces import read_traces as read_traces
    from .traces import write_otlp_json as write_otlp_json
    from .trajectory.extract import extract_trajectory as extract_trajectory
    from .trajectory.records import AgentRun as AgentRun
    from .trajectory.records import CallStatus as CallStatus
    from .trajectory.records import FailureStage as FailureStage
    from .trajectory.records import ModelRequest as ModelRequest
    from .trajectory.records import ToolCall as ToolCall
    from .trajectory.rendering import render_trajectory as render_trajectory
    from .trajectory.trajectory import Trajectory as Trajectory
    from .views.html import html_report as html_report
    from .views.html import write_html_report as write_html_report


def _exports() -> dict[str, str]:
    """Public name -> the module that defines it (relative to this package), read from the block of
    imports above: `    from .module import Name as Name`, one line each."""
    with open(__file__, encoding='utf-8') as source:
        text = source.read()
    block = text.partition('\nif TYPE_CHECKING:\n')[2].partition('\n\n')[0]
    exports: dict[str, str] = {}
    for line in block.splitlines():
        keyword, module, _, name, alias, same = line.split()
        if keyword != 'from' or alias != 'as' or same != name or name in exports:
            raise ImportError(f'agentic_evals/__init__.py: not one public name: {line.strip()!r}')
        exports[name] = module
    return exports


_EXPORTS = _exports()
__all__ = tuple(sorted(_EXPORTS))


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
