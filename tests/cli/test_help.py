"""Every command has --help, and docs/cli.md documents exactly the options it lists, in well-formed tables."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from . import ROOT, env, run_cli

DOCS = (ROOT / 'docs' / 'cli.md').read_text(encoding='utf-8')
COMMANDS = [[], ['run'], ['inspect'], ['compare'], ['render'], ['schema']]


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


def _option_tables() -> list[list[str]]:
    """The `| option | meaning |` tables of docs/cli.md, in page order (the commands', as in COMMANDS)."""
    tables: list[list[str]] = []
    lines = DOCS.splitlines()
    for index, line in enumerate(lines):
        if line == '| option | meaning |':
            rows = []
            for row in lines[index + 2 :]:
                if not row.strip():
                    break
                rows.append(row)
            tables.append(rows)
    return tables


def _documented(row: str) -> set[str]:
    """The options a table row documents: `-q`, `--quiet`, `--json PATH` -> {'-q', '--quiet', '--json'}."""
    first = row.split(' | ')[0].removeprefix('| ')
    return {code.split()[0].split('=')[0] for code in re.findall(r'`([^`]+)`', first)}


def test_the_option_tables_are_well_formed() -> None:
    tables = _option_tables()
    assert len(tables) == len(COMMANDS)
    for rows in tables:
        for row in rows:  # a paragraph merged into a table shows as a row that does not end its cells
            assert row.startswith('| ') and row.endswith(' |'), row
            assert len(re.findall(r'(?<!\\)\|', row)) == 3, row


@pytest.mark.parametrize(('command', 'index'), [(c, i) for i, c in enumerate(COMMANDS)], ids=lambda c: str(c))
def test_each_options_table_matches_its_help(
    capsys: pytest.CaptureFixture[str], command: list[str], index: int
) -> None:
    """Both ways: every option in --help is in the command's table, and the table documents no other."""
    help_text = run_cli(capsys, *command, '--help').out
    listed = {
        option.split()[0]
        for line in help_text.splitlines()
        if re.match(r'  (-|[A-Z])', line)
        for option in line.strip().split('  ')[0].split(', ')
    }
    assert '-h' in listed
    usage = help_text.split('\n\n')[0]
    rows = _option_tables()[index]
    documented = set().union(*(_documented(row) for row in rows))
    assert sorted(listed - documented) == []
    assert sorted(documented - listed - set(re.findall(r'\b[A-Z][A-Z_]+\b', usage))) == []


def test_the_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    text = run_cli(capsys, '--help').out
    commands = re.findall(r'^    (\w+)\s', text, flags=re.MULTILINE)
    assert commands == [c[0] for c in COMMANDS if c]


@pytest.mark.slow
def test_python_dash_m_help_lists_every_command() -> None:
    done = subprocess.run([sys.executable, '-m', 'agentic_evals', '--help'], capture_output=True, text=True, env=env())
    assert done.returncode == 0, done.stderr
    listed = re.findall(r'^    (\w+)\s', done.stdout, flags=re.MULTILINE)
    assert listed == [command[0] for command in COMMANDS if command]
    assert listed == ['run', 'inspect', 'compare', 'render', 'schema']


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
