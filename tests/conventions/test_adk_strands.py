"""Envelopes ADK and Strands put around a tool's result: read out when they hold one text."""

from __future__ import annotations

import pytest

from agentic_evals.conventions.google_adk import unwrapped
from agentic_evals.conventions.strands import content_text


@pytest.mark.parametrize(
    ('raw', 'text'),
    [
        ('{"result": "Sunny"}', 'Sunny'),
        ('{"result": {"temp": 21}}', '{"result": {"temp": 21}}'),  # a dict return is the tool's own
        ('{"result": "a", "extra": 1}', '{"result": "a", "extra": 1}'),
        ('{"error": "transient failure"}', '{"error": "transient failure"}'),
        ('{"result": "unterminated', '{"result": "unterminated'),
        ('plain text', 'plain text'),
    ],
)
def test_adk_unwraps_only_its_own_envelope(raw: str, text: str) -> None:
    assert unwrapped(raw) == text


@pytest.mark.parametrize(
    ('raw', 'text'),
    [
        ('[{"text": "Sunny, 21 C"}]', 'Sunny, 21 C'),
        ('[{"text": "a"}, {"text": "b"}]', 'a\nb'),
        ('[{"text": "a"}, {"image": {"format": "png"}}]', '[{"text": "a"}, {"image": {"format": "png"}}]'),
        ('[]', '[]'),
        ('[{"text": 3}]', '[{"text": 3}]'),
        ('not json', 'not json'),
        ('[' * 1_000 + ']' * 1_000, '[' * 1_000 + ']' * 1_000),  # too deep to parse: kept as recorded
    ],
)
def test_strands_reads_text_blocks(raw: str, text: str) -> None:
    assert content_text(raw) == text
