"""`agentic-evals-otel compare --html PATH`: the comparison as one self-contained HTML page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentic_evals.views.html_page import read_payload

from . import DATASET, run_cli, traces

OLD = 'the previous page\n'


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '250')


@pytest.fixture
def reports(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> dict[str, str]:
    paths = {}
    for variant in ('baseline', 'regressed'):
        path = tmp_path / f'{variant}.json'
        assert run_cli(capsys, 'run', str(DATASET), traces(variant), '--json', str(path), '--allow-failures').code == 0
        paths[variant] = str(path)
    return paths


def _payload(path: Path) -> dict[str, object]:
    payload = read_payload(path.read_text(encoding='utf-8'))
    assert isinstance(payload, dict)
    return payload


def test_a_regression_writes_the_page_beside_the_other_views(
    capsys: pytest.CaptureFixture[str], reports: dict[str, str], tmp_path: Path
) -> None:
    page, markdown = tmp_path / 'compare.html', tmp_path / 'compare.md'
    done = run_cli(
        capsys, 'compare', reports['baseline'], reports['regressed'], '--html', str(page), '--markdown', str(markdown)
    )
    assert done.code == 1
    text = page.read_text(encoding='utf-8')
    assert text.startswith('<!DOCTYPE html>')
    assert '<title>agentic-evals compare: support_agent -&gt; support_agent (regression)</title>' in text
    payload = _payload(page)
    verdict = payload['verdict']
    assert isinstance(verdict, dict)
    assert verdict['passed'] is False
    assert verdict['summary'] == done.last_line  # the page says what the command printed
    cases = payload['cases']
    assert isinstance(cases, list)
    assert [c['name'] for c in cases] == ['refund', 'order_status', 'shipping_faq', 'damaged_escalation']
    assert markdown.read_text(encoding='utf-8').startswith('## ❌ agentic-evals compare')
    assert 'Case changes' in done.out  # the terminal view is unchanged
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'baseline.json',
        'compare.html',
        'compare.md',
        'regressed.json',
    ]


def test_no_regression_says_so(capsys: pytest.CaptureFixture[str], reports: dict[str, str], tmp_path: Path) -> None:
    page = tmp_path / 'same.html'
    done = run_cli(capsys, 'compare', reports['baseline'], reports['baseline'], '--html', str(page))
    assert done.code == 0
    verdict = _payload(page)['verdict']
    assert isinstance(verdict, dict)
    assert (verdict['passed'], verdict['summary']) == (True, done.last_line)
    assert '(no regression)</title>' in page.read_text(encoding='utf-8')


def test_the_page_replaces_the_old_one_only_when_complete(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, reports: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / 'compare.html'
    target.write_text(OLD, encoding='utf-8')
    seen: list[tuple[str, str, Path]] = []
    replace = os.replace

    def checked_replace(source: str | Path, destination: str | Path) -> None:
        seen.append((target.read_text(encoding='utf-8'), Path(source).read_text(encoding='utf-8'), Path(source).parent))
        replace(source, destination)

    monkeypatch.setattr(os, 'replace', checked_replace)
    assert run_cli(capsys, 'compare', reports['baseline'], reports['regressed'], '--html', str(target)).code == 1
    ((before, written, directory),) = seen
    assert before == OLD  # the old page stayed whole until the new one was complete beside it
    assert written == target.read_text(encoding='utf-8') and written.rstrip().endswith('</html>')
    assert directory == tmp_path
    assert not [p for p in tmp_path.iterdir() if p.name.endswith('.tmp')]


def test_an_unwritable_page_fails_before_anything_is_written(
    capsys: pytest.CaptureFixture[str], reports: dict[str, str], tmp_path: Path
) -> None:
    markdown = tmp_path / 'compare.md'
    missing = tmp_path / 'missing' / 'compare.html'
    done = run_cli(
        capsys,
        'compare',
        reports['baseline'],
        reports['regressed'],
        '--markdown',
        str(markdown),
        '--html',
        str(missing),
    )
    assert (done.code, done.out) == (2, '')
    assert (
        done.err == f'agentic-evals-otel: error: {missing}: cannot write: directory {missing.parent} does not exist\n'
    )
    assert not markdown.exists()  # checked with --html's path, before either is written
    long = tmp_path / ('p' * 300 + '.html')
    done = run_cli(capsys, 'compare', reports['baseline'], reports['regressed'], '--html', str(long))
    assert done.code == 2 and done.err.endswith('.html: cannot write: File name too long\n')


def test_an_unreadable_report_writes_no_page(
    capsys: pytest.CaptureFixture[str], reports: dict[str, str], tmp_path: Path
) -> None:
    page = tmp_path / 'compare.html'
    broken = tmp_path / 'broken.json'
    broken.write_text('{"schema": "something else"}', encoding='utf-8')
    done = run_cli(capsys, 'compare', reports['baseline'], str(broken), '--html', str(page))
    assert done.code == 2
    assert done.err.startswith(f'agentic-evals-otel: error: {broken}: expected "schema": "agentic-evals/report@1"')
    assert not page.exists()


def test_the_option_is_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    done = run_cli(capsys, 'compare', '--help')
    assert '--html PATH' in done.out
    assert 'self-contained HTML page' in ' '.join(done.out.split())
