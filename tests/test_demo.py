"""`make demo` runs the main job: the report shows passing evaluators and the deliberate failure with its reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_demo_prints_the_report_with_a_failure_and_its_reason() -> None:
    done = subprocess.run(
        [sys.executable, '-m', 'examples.demo'], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert 'Evaluation Summary' in out
    assert "Reason: called 'ask_expert' (x1), 'check_status' (x1)" in out
    assert "actual trajectory matches expected: ['lookup', 'lookup']" in out
    assert 'tool_budget: ✗' in out
    assert 'Reason: 14 tool call(s), budget=10' in out or 'Reason: 12 tool call(s), budget=10' in out
