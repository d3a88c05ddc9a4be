"""The demos run: `make demo` (the CLI on the bundled traces) and the live Dataset example."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Each test starts a Python interpreter: left out of `make test-fast`.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def run(module: str) -> str:
    # A wide "terminal", so the tables do not wrap the reasons the assertions look for.
    env = {**os.environ, 'COLUMNS': '200'}
    done = subprocess.run(
        [sys.executable, '-m', module], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_make_demo_passes_the_baseline_and_fails_the_regression_with_reasons() -> None:
    out = run('examples.demo')
    assert out.count('# exit status 0 (expected 0)') == 1
    assert out.count('# exit status 1 (expected 1)') == 2
    assert 'PASS' in out
    assert (
        "FAIL: 3 of 13 assertions failed (ArgumentCorrectness on case 'refund', ToolCorrectness on case"
        " 'shipping_faq', ArgumentCorrectness on case 'damaged_escalation'); TrajectoryMatch average 0.556 < 0.900;"
        ' fail rate 75.0% (3 of 4 cases) > 0.0%'
    ) in out
    assert "No calls to tool 'escalate' were recorded." in out
    assert 'TrajectoryMatch average 1.000 -> 0.556 (-0.444)' in out
    assert out.rstrip().endswith('demo finished as expected')


def test_make_demo_installs_the_package_alone_not_the_development_environment() -> None:
    """`make demo` needs only the package: its venv gets no extras (the dev one brings Ray and Playwright)."""
    make = shutil.which('make')
    if make is None:
        pytest.skip('no make on this machine')
    # Run from `make test`, the outer make's settings would turn on its directory messages.
    env = {k: v for k, v in os.environ.items() if k not in ('MAKELEVEL', 'MAKEFLAGS', 'MFLAGS')}
    done = subprocess.run(
        [make, '--no-print-directory', '-n', '-B', 'demo'],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=env,
        check=True,
    )
    commands = done.stdout.splitlines()
    assert commands[-1] == '.venv-demo/bin/python -m examples.demo'
    installs = [command for command in commands if ' pip install ' in command]
    assert installs == [
        '.venv-demo/bin/python -m pip install -q --upgrade pip',
        '.venv-demo/bin/python -m pip install -q -e .',
    ]
    assert not any(command.startswith('.venv/') for command in commands)


def test_live_dataset_demo_prints_the_report_with_a_failure_and_its_reason() -> None:
    out = run('examples.live_dataset')
    assert 'Evaluation Summary' in out
    assert "Reason: called 'ask_expert' (x1), 'check_status' (x1)" in out
    assert "actual trajectory matches expected: ['lookup', 'lookup']" in out
    assert 'tool_budget: ✗' in out
    assert 'Reason: 14 tool call(s), budget=10' in out or 'Reason: 12 tool call(s), budget=10' in out
