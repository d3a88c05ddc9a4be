"""Score what an AI agent did from the OpenTelemetry spans it already emits.

The names below are imported on first use (PEP 562), so `import agentic_evals` and the command
line's `--help` stay fast: pydantic-evals, pydantic-ai and OpenTelemetry load only when a name
that needs them is read.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .capturing import Capture, capture
    from .conversations import ConversationFormat, trajectory_from_messages
    from .engines.api import evaluate_trace_files
    from .errors import AgenticEvalsError, FileError
    from .evaluators._base import ConversationSource
    from .evaluators.budgets import MaxCost, MaxDuration, MaxFailedCalls, MaxModelRequests, MaxTokens, MaxToolCalls
    from .evaluators.judges.goal_accuracy import AgentGoalAccuracy
    from .evaluators.judges.topic_adherence import TopicAdherence, TopicAdherenceMode
    from .evaluators.judges.trajectory_judge import TrajectoryJudge
    from .evaluators.order import TrajectoryMatch, TrajectoryOrder
    from .evaluators.permissions import NoLoops, ToolPermission
    from .evaluators.reference_calls import ToolCallAccuracy, ToolCallF1
    from .evaluators.registry import evaluator_types
    from .evaluators.tool_call_match import ToolCallMatch
    from .evaluators.tools import ArgumentCorrectness, ArgumentMatchMode, ArgumentOccurrence, ToolCorrectness
    from .offline.context import evaluator_context
    from .offline.evaluate import evaluate_traces, evaluate_traces_sync
    from .offline.matching import AmbiguousTraceError
    from .reports.document import ReportDocument
    from .reports.gates import Gates, MaxMetric, MinScore
    from .reports.html import html_report, write_html_report
    from .scoring.argument_rules import ArgumentsMode
    from .scoring.call_matching import canonical_json
    from .scoring.checks import max_cost, max_duration, max_failed_calls, max_tokens, no_loops, tool_permission
    from .scoring.metrics import (
        MetricResult,
        argument_correctness,
        max_model_requests,
        max_tool_calls,
        tool_call_accuracy,
        tool_call_f1,
        tool_correctness,
        trajectory_match,
    )
    from .scoring.tool_call_match import ToolCallMatchMode, ToolCallMatchResult, tool_call_match
    from .testing import assert_trajectory
    from .traces import LoadedTrace, OtlpJsonFileExporter, load_traces, read_traces, write_otlp_json
    from .trajectory.extract import extract_trajectory
    from .trajectory.records import AgentRun, CallStatus, FailureStage, ModelRequest, ToolCall
    from .trajectory.rendering import render_trajectory
    from .trajectory.trajectory import Trajectory

_EXPORTS: dict[str, str] = {
    'AgentGoalAccuracy': '.evaluators.judges.goal_accuracy',
    'AgentRun': '.trajectory.records',
    'AgenticEvalsError': '.errors',
    'AmbiguousTraceError': '.offline.matching',
    'ArgumentCorrectness': '.evaluators.tools',
    'ArgumentMatchMode': '.evaluators.tools',
    'ArgumentOccurrence': '.evaluators.tools',
    'ArgumentsMode': '.scoring.argument_rules',
    'CallStatus': '.trajectory.records',
    'Capture': '.capturing',
    'ConversationFormat': '.conversations',
    'ConversationSource': '.evaluators._base',
    'FailureStage': '.trajectory.records',
    'FileError': '.errors',
    'Gates': '.reports.gates',
    'LoadedTrace': '.traces',
    'MaxCost': '.evaluators.budgets',
    'MaxDuration': '.evaluators.budgets',
    'MaxFailedCalls': '.evaluators.budgets',
    'MaxMetric': '.reports.gates',
    'MaxModelRequests': '.evaluators.budgets',
    'MaxTokens': '.evaluators.budgets',
    'MaxToolCalls': '.evaluators.budgets',
    'MetricResult': '.scoring.metrics',
    'MinScore': '.reports.gates',
    'ModelRequest': '.trajectory.records',
    'NoLoops': '.evaluators.permissions',
    'OtlpJsonFileExporter': '.traces',
    'ReportDocument': '.reports.document',
    'ToolCall': '.trajectory.records',
    'ToolCallAccuracy': '.evaluators.reference_calls',
    'ToolCallF1': '.evaluators.reference_calls',
    'ToolCallMatch': '.evaluators.tool_call_match',
    'ToolCallMatchMode': '.scoring.tool_call_match',
    'ToolCallMatchResult': '.scoring.tool_call_match',
    'ToolCorrectness': '.evaluators.tools',
    'ToolPermission': '.evaluators.permissions',
    'TopicAdherence': '.evaluators.judges.topic_adherence',
    'TopicAdherenceMode': '.evaluators.judges.topic_adherence',
    'Trajectory': '.trajectory.trajectory',
    'TrajectoryJudge': '.evaluators.judges.trajectory_judge',
    'TrajectoryMatch': '.evaluators.order',
    'TrajectoryOrder': '.evaluators.order',
    'argument_correctness': '.scoring.metrics',
    'assert_trajectory': '.testing',
    'canonical_json': '.scoring.call_matching',
    'capture': '.capturing',
    'evaluate_trace_files': '.engines.api',
    'evaluate_traces': '.offline.evaluate',
    'evaluate_traces_sync': '.offline.evaluate',
    'evaluator_context': '.offline.context',
    'evaluator_types': '.evaluators.registry',
    'extract_trajectory': '.trajectory.extract',
    'html_report': '.reports.html',
    'load_traces': '.traces',
    'max_cost': '.scoring.checks',
    'max_duration': '.scoring.checks',
    'max_failed_calls': '.scoring.checks',
    'max_model_requests': '.scoring.metrics',
    'max_tokens': '.scoring.checks',
    'max_tool_calls': '.scoring.metrics',
    'no_loops': '.scoring.checks',
    'read_traces': '.traces',
    'render_trajectory': '.trajectory.rendering',
    'tool_call_accuracy': '.scoring.metrics',
    'tool_call_f1': '.scoring.metrics',
    'tool_call_match': '.scoring.tool_call_match',
    'tool_correctness': '.scoring.metrics',
    'tool_permission': '.scoring.checks',
    'trajectory_from_messages': '.conversations',
    'trajectory_match': '.scoring.metrics',
    'write_html_report': '.reports.html',
    'write_otlp_json': '.traces',
}
"""Public name -> the module that defines it (relative to this package)."""


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = (
    'AgentGoalAccuracy',
    'AgentRun',
    'AgenticEvalsError',
    'AmbiguousTraceError',
    'ArgumentCorrectness',
    'ArgumentMatchMode',
    'ArgumentOccurrence',
    'ArgumentsMode',
    'CallStatus',
    'Capture',
    'ConversationFormat',
    'ConversationSource',
    'FailureStage',
    'FileError',
    'Gates',
    'LoadedTrace',
    'MaxCost',
    'MaxDuration',
    'MaxFailedCalls',
    'MaxMetric',
    'MaxModelRequests',
    'MaxTokens',
    'MaxToolCalls',
    'MetricResult',
    'MinScore',
    'ModelRequest',
    'NoLoops',
    'OtlpJsonFileExporter',
    'ReportDocument',
    'ToolCall',
    'ToolCallAccuracy',
    'ToolCallF1',
    'ToolCallMatch',
    'ToolCallMatchMode',
    'ToolCallMatchResult',
    'ToolCorrectness',
    'ToolPermission',
    'TopicAdherence',
    'TopicAdherenceMode',
    'Trajectory',
    'TrajectoryJudge',
    'TrajectoryMatch',
    'TrajectoryOrder',
    'argument_correctness',
    'assert_trajectory',
    'canonical_json',
    'capture',
    'evaluate_trace_files',
    'evaluate_traces',
    'evaluate_traces_sync',
    'evaluator_context',
    'evaluator_types',
    'extract_trajectory',
    'html_report',
    'load_traces',
    'max_cost',
    'max_duration',
    'max_failed_calls',
    'max_model_requests',
    'max_tokens',
    'max_tool_calls',
    'no_loops',
    'read_traces',
    'render_trajectory',
    'tool_call_accuracy',
    'tool_call_f1',
    'tool_call_match',
    'tool_correctness',
    'tool_permission',
    'trajectory_from_messages',
    'trajectory_match',
    'write_html_report',
    'write_otlp_json',
)
