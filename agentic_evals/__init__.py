"""Score what an AI agent did from the OpenTelemetry spans it already emits."""

from .capture import Capture, capture
from .conversations import ConversationFormat, trajectory_from_messages
from .errors import AgenticEvalsError, FileError
from .evaluators._base import ConversationSource
from .evaluators.budgets import MaxModelRequests, MaxToolCalls
from .evaluators.judges.goal_accuracy import AgentGoalAccuracy
from .evaluators.judges.topic_adherence import TopicAdherence, TopicAdherenceMode
from .evaluators.judges.trajectory_judge import TrajectoryJudge
from .evaluators.order import TrajectoryMatch, TrajectoryOrder
from .evaluators.reference_calls import ToolCallAccuracy, ToolCallF1
from .evaluators.registry import evaluator_types
from .evaluators.tools import ArgumentCorrectness, ArgumentMatchMode, ArgumentOccurrence, ToolCorrectness
from .offline.context import evaluator_context
from .offline.evaluate import evaluate_traces, evaluate_traces_sync
from .offline.matching import AmbiguousTraceError
from .scoring.call_matching import canonical_json
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
from .traces import LoadedTrace, OtlpJsonFileExporter, load_traces, read_traces, write_otlp_json
from .trajectory.extract import extract_trajectory
from .trajectory.records import AgentRun, CallStatus, FailureStage, ModelRequest, ToolCall
from .trajectory.rendering import render_trajectory
from .trajectory.trajectory import Trajectory

__all__ = (
    'AgentGoalAccuracy',
    'AgentRun',
    'AgenticEvalsError',
    'AmbiguousTraceError',
    'ArgumentCorrectness',
    'ArgumentMatchMode',
    'ArgumentOccurrence',
    'CallStatus',
    'Capture',
    'ConversationFormat',
    'ConversationSource',
    'FailureStage',
    'FileError',
    'LoadedTrace',
    'MaxModelRequests',
    'MaxToolCalls',
    'MetricResult',
    'ModelRequest',
    'OtlpJsonFileExporter',
    'ToolCall',
    'ToolCallAccuracy',
    'ToolCallF1',
    'ToolCorrectness',
    'TopicAdherence',
    'TopicAdherenceMode',
    'Trajectory',
    'TrajectoryJudge',
    'TrajectoryMatch',
    'TrajectoryOrder',
    'argument_correctness',
    'canonical_json',
    'capture',
    'evaluate_traces',
    'evaluate_traces_sync',
    'evaluator_context',
    'evaluator_types',
    'extract_trajectory',
    'load_traces',
    'max_model_requests',
    'max_tool_calls',
    'read_traces',
    'render_trajectory',
    'tool_call_accuracy',
    'tool_call_f1',
    'tool_correctness',
    'trajectory_from_messages',
    'trajectory_match',
    'write_otlp_json',
)
