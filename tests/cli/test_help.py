"""Every command has --help, and every option it lists is documented in docs/cli.md."""

from __future__ import annotations

import re

import pytest

from . import ROOT, run_cli

DOCS = (ROOT / 'docs' / 'cli.md').read_text(encoding='utf-8')
COMMANDS = [[], ['run'], ['inspect'], ['compare']]


def _options(help_text: str) -> set[str]:
    """The option strings (`-q`, `--min-score`) and positional names (`TRACES`) a help text lists."""
    found = set(re.findall(r'(?<![\w-])(--?[a-z][\w-]*)', help_text))
    found |= set(re.findall(r'^  ([A-Z][A-Z_]+)\s', help_text, flags=re.MULTILINE))
    return found


@pytest.mark.parametrize('command', COMMANDS, ids=lambda c: ' '.join(c) or 'agentic-evals-otel')
def test_help_exits_zero_and_names_the_exit_statuses(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    done = run_cli(capsys, *command, '--help')
    assert done.code == 0
    assert done.out.startswith('usage: agentic-evals-otel')
    assert 'exit status: 0 ' in done.out


@pytest.mark.parametrize('command', COMMANDS, ids=lambda c: ' '.join(c) or 'agentic-evals-otel')
def test_every_option_in_help_is_documented(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    options = _options(run_cli(capsys, *command, '--help').out)
    assert '-h' in options
    missing = sorted(o for o in options if not re.search(rf'`{re.escape(o)}[` ]', DOCS))
    assert missing == []


def test_the_option_finder_sees_options() -> None:
    assert _options('  --json PATH   write\n  -q, --quiet  x\n  TRACES   files\n') == {
        '--json',
        '-q',
        '--quiet',
        'TRACES',
    }
