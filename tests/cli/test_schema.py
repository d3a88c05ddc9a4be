"""`agentic-evals-otel schema` prints the report's JSON Schema: from a source tree, the committed docs copy.

`tests/test_packaging.py` checks the installed wheel's copy, which is the same file.
"""

from __future__ import annotations

import json

import pytest

from . import ROOT, run_cli

COMMITTED = ROOT / 'docs' / 'schema' / 'report-1.schema.json'


def test_schema_prints_the_committed_schema(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'schema')
    assert done.code == 0
    assert done.err == ''
    assert done.out == COMMITTED.read_text(encoding='utf-8')
    assert json.loads(done.out)['title'] == 'agentic-evals/report@1'


def test_schema_takes_no_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'schema', 'report.json')
    assert done.code == 2
    assert done.err.splitlines()[-1] == 'agentic-evals-otel schema: error: unrecognized arguments: report.json'
