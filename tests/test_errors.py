"""One error base: every exception class the package defines derives from `AgenticEvalsError`."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
from pathlib import Path

import pytest

import agentic_evals
from agentic_evals import AgenticEvalsError, FileError


def _modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(agentic_evals.__path__, 'agentic_evals.')]


def test_every_exception_class_derives_from_the_base() -> None:
    orphans = [
        f'{name}.{cls.__name__}'
        for name in _modules()
        for cls in vars(importlib.import_module(name)).values()
        if inspect.isclass(cls)
        and issubclass(cls, BaseException)
        and cls.__module__ == name
        and not issubclass(cls, AgenticEvalsError)
    ]
    assert orphans == []


@pytest.mark.parametrize(
    ('error', 'shown'),
    [
        (FileError('runs/a.jsonl', 'invalid JSON', line=3), 'runs/a.jsonl:3: invalid JSON'),
        (FileError('runs/a.pb', 'truncated message', offset=120), 'runs/a.pb: byte 120: truncated message'),
        (FileError(Path('dataset.yaml'), 'no such file'), 'dataset.yaml: no such file'),
    ],
)
def test_a_file_error_is_one_line_naming_the_file_and_place(error: FileError, shown: str) -> None:
    assert str(error) == shown
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.line, copy.offset) == (FileError, shown, error.line, error.offset)


def test_the_cli_reports_any_agentic_evals_error_as_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentic_evals.cli import inspect as inspect_command
    from agentic_evals.cli import main

    class Odd(AgenticEvalsError):
        pass

    def broken(*_: object) -> object:
        raise Odd('something the command cannot use')

    monkeypatch.setattr(inspect_command, 'load_traces', broken)
    assert main(['inspect', 'anything.jsonl']) == 2
    assert capsys.readouterr().err == 'agentic-evals-otel: error: something the command cannot use\n'
