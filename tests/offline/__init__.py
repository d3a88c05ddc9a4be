"""Shared by the offline tests: the committed multi-turn fixture."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHATS = ROOT / 'fixtures' / 'conversations' / 'chats.otlp.jsonl'
"""Five traces: two two-turn pydantic-ai chats interleaved, and one hand-instrumented run without a conversation id."""
