"""Evaluators over the extracted trajectory, grouped by concern."""

from ._base import ConversationSource
from .budgets import MaxModelRequests, MaxToolCalls
from .order import TrajectoryMatch, TrajectoryOrder
from .reference_calls import ToolCallAccuracy, ToolCallF1
from .tools import ArgumentCorrectness, ArgumentMatchMode, ArgumentOccurrence, ToolCorrectness

__all__ = (
    'ArgumentCorrectness',
    'ArgumentMatchMode',
    'ArgumentOccurrence',
    'ConversationSource',
    'MaxModelRequests',
    'MaxToolCalls',
    'ToolCallAccuracy',
    'ToolCallF1',
    'ToolCorrectness',
    'TrajectoryMatch',
    'TrajectoryOrder',
)
