"""`run` never makes the repr of the whole report (asyncio used to, restoring the SIGINT handler on 3.11)."""

from __future__ import annotations

import pytest
from pydantic_evals.reporting import EvaluationReport

from . import DATASET, run_cli, traces


def test_the_report_is_never_reprd(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []

    def counted(report: object) -> str:
        made.append(type(report).__name__)
        return 'EvaluationReport(...)'

    monkeypatch.setattr(EvaluationReport, '__repr__', counted)
    outcome = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--no-progress')
    assert outcome.code == 0
    assert made == []
