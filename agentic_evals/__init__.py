"""Score what an AI agent did from the OpenTelemetry spans it already emits."""

from .capture import Capture, capture
from .context import evaluator_context
from .evaluators import (
    ArgumentCorrectness,
    ArgumentMatchMode,
    ArgumentOccurrence,
    MaxModelRequests,
    MaxToolCalls,
    ToolCorrectness,
    TrajectoryMatch,
    TrajectoryOrder,
)
from .evaluators.judges import AgentGoalAccuracy, TopicAdherence, TopicAdherenceMode, TrajectoryJudge
from .evaluators.rendering import render_trajectory
from .extract import extract_trajectory
from .registry import evaluator_types
from .trajectory import AgentRun, CallStatus, FailureStage, ModelRequest, ToolCall, Trajectory

__all__ = (
    'AgentGoalAccuracy',
    'AgentRun',
    'ArgumentCorrectness',
    'ArgumentMatchMode',
    'ArgumentOccurrence',
    'CallStatus',
    'Capture',
    'FailureStage',
    'MaxModelRequests',
    'MaxToolCalls',
    'ModelRequest',
    'ToolCall',
    'ToolCorrectness',
    'TopicAdherence',
    'TopicAdherenceMode',
    'Trajectory',
    'TrajectoryJudge',
    'TrajectoryMatch',
    'TrajectoryOrder',
    'capture',
    'evaluator_context',
    'evaluator_types',
    'extract_trajectory',
    'render_trajectory',
)
