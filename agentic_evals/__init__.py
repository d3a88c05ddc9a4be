"""Score what an AI agent did from the OpenTelemetry spans it already emits."""

from .capture import Capture, capture
from .context import evaluator_context
from .conversations import ConversationFormat, trajectory_from_messages
from .evaluators import (
    ArgumentCorrectness,
    ArgumentMatchMode,
    ArgumentOccurrence,
    ConversationSource,
    MaxModelRequests,
    MaxToolCalls,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCorrectness,
    TrajectoryMatch,
    TrajectoryOrder,
)
from .evaluators.judges import AgentGoalAccuracy, TopicAdherence, TopicAdherenceMode, TrajectoryJudge
from .evaluators.rendering import render_trajectory
from .extract import extract_trajectory
from .metrics import (
    MetricResult,
    argument_correctness,
    canonical_json,
    max_model_requests,
    max_tool_calls,
    tool_call_accuracy,
    tool_call_f1,
    tool_correctness,
    trajectory_match,
)
from .offline import evaluate_traces, evaluate_traces_sync
from .registry import evaluator_types
from .traces import LoadedTrace, TraceFileError, load_traces, read_traces, write_otlp_json
from .trajectory import AgentRun, CallStatus, FailureStage, ModelRequest, ToolCall, Trajectory

__all__ = (
    'AgentGoalAccuracy',
    'AgentRun',
    'ArgumentCorrectness',
    'ArgumentMatchMode',
    'ArgumentOccurrence',
    'CallStatus',
    'Capture',
    'ConversationFormat',
    'ConversationSource',
    'FailureStage',
    'LoadedTrace',
    'MaxModelRequests',
    'MaxToolCalls',
    'MetricResult',
    'ModelRequest',
    'ToolCall',
    'ToolCallAccuracy',
    'ToolCallF1',
    'ToolCorrectness',
    'TopicAdherence',
    'TopicAdherenceMode',
    'TraceFileError',
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
