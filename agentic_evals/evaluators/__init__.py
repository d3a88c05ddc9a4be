"""Evaluators over the extracted trajectory, grouped by concern."""

from .budgets import MaxModelRequests, MaxToolCalls
from .order import TrajectoryMatch, TrajectoryOrder
from .tools import ArgumentCorrectness, ArgumentMatchMode, ArgumentOccurrence, ToolCorrectness

__all__ = (
    'ArgumentCorrectness',
    'ArgumentMatchMode',
    'ArgumentOccurrence',
    'MaxModelRequests',
    'MaxToolCalls',
    'ToolCorrectness',
    'TrajectoryMatch',
    'TrajectoryOrder',
)
