"""The progress display: on stderr, only on a terminal, only for many traces, off with --no-progress."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from rich.console import Console

from agentic_evals import capture, write_otlp_json
from agentic_evals.cli.progress import SHOW_AFTER, TraceProgress

from . import run_cli


def _terminal() -> tuple[Console, io.StringIO]:
    stream = io.StringIO()
    return Console(file=stream, force_terminal=True, width=100), stream


def _drive(progress: TraceProgress, count: int) -> None:
    with progress:
        for _ in range(count):
            progress.loaded()
        progress.start_scoring(count)
        for _ in range(count):
            progress.scored()


def test_shown_on_a_terminal_for_many_traces() -> None:
    console, stream = _terminal()
    progress = TraceProgress(console, enabled=True)
    _drive(progress, SHOW_AFTER + 5)
    assert 'Loading traces' in stream.getvalue()
    assert 'Scoring cases' in stream.getvalue()
    assert (progress.loaded_count, progress.scored_count) == (SHOW_AFTER + 5, SHOW_AFTER + 5)


@pytest.mark.parametrize(('enabled', 'count'), [(False, SHOW_AFTER + 5), (True, SHOW_AFTER - 1)])
def test_not_shown_when_disabled_or_for_few_traces(enabled: bool, count: int) -> None:
    console, stream = _terminal()
    _drive(TraceProgress(console, enabled=enabled), count)
    assert stream.getvalue() == ''


class _TerminalStream(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def many_traces(tmp_path: Path) -> Path:
    provider = TracerProvider()
    tracer = provider.get_tracer('test')
    with capture(provider) as captured:
        for index in range(SHOW_AFTER + 5):
            with tracer.start_as_current_span('invoke_agent bot', attributes={'gen_ai.agent.name': 'bot'}):
                tool = {'gen_ai.tool.name': 'search', 'gen_ai.tool.call.arguments': f'{{"n": {index}}}'}
                with tracer.start_as_current_span('execute_tool search', attributes=tool):
                    pass
    path = tmp_path / 'many.otlp.jsonl'
    write_otlp_json(captured.spans, path)
    (tmp_path / 'e.yaml').write_text('- MaxToolCalls: 1\n', encoding='utf-8')
    return path


@pytest.mark.parametrize(('flags', 'shown'), [([], True), (['--no-progress'], False)])
def test_run_on_a_terminal(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    many_traces: Path,
    flags: list[str],
    shown: bool,
) -> None:
    stderr = _TerminalStream()
    monkeypatch.setattr(sys, 'stderr', stderr)
    done = run_cli(capsys, 'run', '--evaluators', str(many_traces.parent / 'e.yaml'), str(many_traces), *flags)
    assert done.code == 0
    assert done.last_line == f'PASS: {SHOW_AFTER + 5} cases; {SHOW_AFTER + 5} of {SHOW_AFTER + 5} assertions passed'
    assert ('Scoring cases' in stderr.getvalue()) is shown
