"""The JSON report on disk: written whatever text the traces held, read back with the dataset files' limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_evals import FileError
from agentic_evals.files import MAX_FILE_BYTES
from agentic_evals.reports.document import (
    SCHEMA,
    AssertionResult,
    CaseResult,
    ReportDocument,
    ScoreResult,
    dump_document,
    read_document,
)

from ..cli import run_cli

SURROGATES = ReportDocument(
    name='nightly \ud800',
    cases=[
        CaseResult(
            'case \udfff',
            output={'text': 'half a pair: \ud83d', '\udc00key': ['\ud800']},
            scores={'s': ScoreResult(0.5, 'reason \ud800')},
            assertions={'a': AssertionResult(True, 'fine')},
        )
    ],
).with_derived()


def test_lone_surrogates_are_written_as_escapes_and_read_back_unchanged(tmp_path: Path) -> None:
    text = dump_document(SURROGATES)
    assert '"name": "nightly \\ud800"' in text
    text.encode('utf-8')  # no lone surrogate is left in the text itself
    path = tmp_path / 'report.json'
    path.write_text(text, encoding='utf-8')
    assert read_document(path) == SURROGATES


def test_the_json_text_is_unchanged_for_ordinary_reports() -> None:
    document = ReportDocument(
        name='ünïcode', cases=[CaseResult('a', inputs={'k': [1, 2.5, float('nan'), {}]}, output=float('inf'))]
    ).with_derived()
    text = dump_document(document)
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + '\n'
    assert '"name": "ünïcode"' in text
    assert json.loads(text)['cases'][0]['inputs'] == {'k': [1, 2.5, None, {}]}  # not NaN, which is not JSON
    assert json.loads(text)['cases'][0]['output'] is None


def _error(path: Path, text: str) -> str:
    path.write_text(text, encoding='utf-8')
    with pytest.raises(FileError) as raised:
        read_document(path)
    message = str(raised.value)
    assert '\n' not in message
    return message.removeprefix(str(path))


def test_nesting_deeper_than_python_can_parse_is_one_line(tmp_path: Path) -> None:
    text = '{"schema": "agentic-evals/report@1",\n"name": "x", "cases": [{"name": "a", "output": ' + '[' * 5000
    assert _error(tmp_path / 'r.json', text + ']' * 5000 + '}]}') == ':2: nested too deeply (5003 levels)'


def test_a_5000_digit_integer_is_one_line(tmp_path: Path) -> None:
    text = '{"schema": "agentic-evals/report@1",\n"name": "x",\n"cases": [{"name": "a", "metrics": {"n": '
    assert _error(tmp_path / 'r.json', text + '9' * 5000 + '}}]}') == ':3: an integer with more than 4300 digits'


def test_a_report_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / 'r.json'
    with path.open('wb') as file:
        file.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(FileError) as raised:
        read_document(path)
    assert str(raised.value) == f'{path}: too large: {MAX_FILE_BYTES + 1:,} bytes (the limit is 256 MiB)'


def test_compare_says_so_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = tmp_path / 'good.json'
    good.write_text(dump_document(SURROGATES), encoding='utf-8')
    deep = tmp_path / 'deep.json'
    deep.write_text(f'{{"schema": "{SCHEMA}", "name": ' + '[' * 5000 + ']' * 5000 + '}', encoding='utf-8')
    done = run_cli(capsys, 'compare', str(good), str(deep))
    assert (done.code, done.out, done.err) == (
        2,
        '',
        f'agentic-evals-otel: error: {deep}:1: nested too deeply (5001 levels)\n',
    )
    same = run_cli(capsys, 'compare', str(good), str(good))
    assert same.code == 0, same.err
