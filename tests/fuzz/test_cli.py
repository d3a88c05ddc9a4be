"""Fuzzing the command line: mutated trace files through `inspect` and `run`, each in its own process.

The in-process harness (`test_trace_files.py`) checks the loaders' promises; this one checks what
a user sees: the real console entry (`python -m agentic_evals`), its exit status and its stderr.
For each mutated file (the same seeded mutator, so a case replays from its number):

- the status is 0, 1 or 2: never 3 (a bug), never a signal, never a hang (`SECONDS_PER_COMMAND`);
- stderr holds no traceback, and on status 2 its error is one line naming the file.

`AGENTIC_EVALS_FUZZ_CLI_CASES` sets the number of files (default `CASES`; `make fuzz` runs more).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from .test_trace_files import FIXTURES, SEED, mutate

CASES = int(os.environ.get('AGENTIC_EVALS_FUZZ_CLI_CASES', '8'))
SECONDS_PER_COMMAND = 120.0
"""A hang guard only: a command takes about a second."""

EVALUATORS = """\
evaluators:
  - MaxToolCalls: 10
  - ToolCorrectness: [get_weather]
  - TrajectoryMatch: {expected_trajectory: [get_weather], order: in_order}
"""


def commands(path: Path, tmp: Path) -> list[list[str]]:
    evaluators = tmp / 'evaluators.yaml'
    evaluators.write_text(EVALUATORS)
    return [
        ['inspect', str(path)],
        ['inspect', '--json', str(path)],
        ['run', '--evaluators', str(evaluators), str(path), '--json', str(tmp / 'report.json'), '-q'],
    ]


def problem(args: list[str], path: Path) -> str | None:
    """What the command did wrong, or `None`."""
    try:
        done = subprocess.run(
            [sys.executable, '-m', 'agentic_evals', *args],
            capture_output=True,
            text=True,
            errors='replace',
            timeout=SECONDS_PER_COMMAND,
            env={**os.environ, 'COLUMNS': '100'},
        )
    except subprocess.TimeoutExpired:
        return f'no answer within {SECONDS_PER_COMMAND:.0f} s'
    if done.returncode not in (0, 1, 2):
        return f'exit status {done.returncode}: {done.stderr[-400:]!r}'
    if 'Traceback' in done.stderr:
        return f'a traceback: {done.stderr[-400:]!r}'
    if done.returncode == 2:
        errors = [line for line in done.stderr.splitlines() if ': error: ' in line]
        if len(errors) != 1:
            return f'status 2 with {len(errors)} error lines: {done.stderr[-400:]!r}'
        if str(path) not in errors[0] and str(path.parent) not in errors[0]:
            return f'the error does not name the file: {errors[0]!r}'
    return None


@pytest.mark.slow
def test_mutated_trace_files_through_the_command_line(tmp_path: Path) -> None:
    failures = []
    for case in range(CASES):
        rng = random.Random(SEED * 1_000_003 + case)
        fixture = rng.choice(FIXTURES)
        data, what = mutate(rng, fixture)
        folder = tmp_path / f'case{case}'
        folder.mkdir()
        path = folder / fixture.name
        path.write_bytes(data)
        for args in commands(path, folder):
            found = problem(args, path)
            if found is not None:
                failures.append(f'case {case} ({fixture.name}, {what}), {args[0]} {args[1]}: {found}')
    assert failures == [], '\n'.join(failures[:20])
