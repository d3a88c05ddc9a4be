"""Text from traces and datasets is shown as text in every view: never markup, escape sequences or active Markdown."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from rich.text import Text

from agentic_evals.reports.compare import compare_documents
from agentic_evals.reports.document import (
    AssertionResult,
    CaseFailure,
    CaseResult,
    EvaluatorError,
    LabelResult,
    ReportDocument,
    ScoreResult,
    dump_document,
)
from agentic_evals.reports.gates import Gates, MinScore
from agentic_evals.reports.judge import check_gates
from agentic_evals.views.compare_view import print_comparison, render_comparison_markdown
from agentic_evals.views.junit import render_junit
from agentic_evals.views.markdown import markdown_cell, render_markdown
from agentic_evals.views.table import print_report
from agentic_evals.views.terminal import make_console, print_verdict
from agentic_evals.views.text import one_line, visible

from ..cli import hostile_trace, run_cli

MARKUP = '[bold red]x[/bold red] [/x]'
ESCAPES = '\x1b]0;title\x07 \x1b[2J\r\b\x9b\u202e'
MARKDOWN = '![x](http://host/track.png) [link](http://host) <img src=x> *em* _u_ `code` ~~s~~ $x$ a|b'
HOSTILE = f'{MARKUP} {ESCAPES} {MARKDOWN} \ud800 line\nbreak'
RAW = ['\x1b', '\x07', '\r', '\b', '\x9b', '\u202e', '\ud800']
"""Characters that must never reach a terminal or a report as themselves."""


def _document(text: str = HOSTILE) -> ReportDocument:
    return ReportDocument(
        name=f'suite {text}',
        cases=[
            CaseResult(
                f'case {text}',
                scores={f'score {text}': ScoreResult(0.25, f'reason {text}')},
                assertions={f'tool {text}': AssertionResult(False, f'called {text}')},
                labels={'label': LabelResult(f'value {text}', f'why {text}')},
                evaluator_errors=[EvaluatorError(f'judge {text}', f'raised {text}')],
            )
        ],
        failures=[CaseFailure(f'lost {text}', f'no trace for {text}')],
    ).with_derived()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize('terminal', [False, True], ids=['piped', 'terminal'])
def test_the_terminal_table_and_verdict_show_data_as_text(monkeypatch: pytest.MonkeyPatch, terminal: bool) -> None:
    monkeypatch.setenv('COLUMNS', '400')
    document = _document()
    gates = Gates(min_scores=(MinScore(f'score {HOSTILE}', 0.5),))
    out = _Terminal() if terminal else io.StringIO()
    console = make_console(out)
    print_report(document, gates, check_gates(document, gates), console, reasons=True)
    print_verdict(console, check_gates(document, gates).summary, passed=False)
    text = out.getvalue()
    if terminal:  # rich's own styles (SGR sequences) are there, nothing else that starts with ESC
        assert '\x1b[' in text
        text = re.sub(r'\x1b\[[0-9;]*m', '', text)
    assert [c for c in RAW if c in text] == []
    assert MARKUP in text
    assert '\\x1b]0;title\\x07 \\x1b[2J\\r\\x08\\x9b\\u202e' in text
    assert '\\ud800' in text
    verdict = text.split('FAIL: ')[-1]
    assert verdict.endswith('average 0.250 < 0.500\n')
    if not terminal:
        assert verdict.count('\n') == 1


def test_any_printed_text_is_escaped_by_the_console_itself() -> None:
    """What a view forgot to escape (the `inspect` tree builds its own labels) the console escapes."""
    out = _Terminal()
    make_console(out).print(Text(f'call 0: {ESCAPES} {MARKUP}'), Text.assemble(('tool ', 'bold'), ESCAPES))
    text = re.sub(r'\x1b\[[0-9;]*m', '', out.getvalue())
    assert [c for c in RAW if c in text] == []
    assert '\\x1b]0;title \\x1b[2J\\x9b\\u202e' in text and MARKUP in text  # (rich's Text drops BEL, CR, BS)
    assert text.replace('\n', '').count('\\x1b]0;title') == 2  # folded, not cropped, though escaping made it longer


def _tokens(markdown: str) -> list[tuple[str, str]]:
    parser = MarkdownIt('commonmark').enable('table').enable('strikethrough')
    found: list[tuple[str, str]] = []
    for token in parser.parse(markdown):
        found += [(token.type, token.content), *((child.type, child.content) for child in token.children or [])]
    return found


@pytest.mark.parametrize('render', ['report', 'comparison'])
def test_markdown_shows_data_as_written(render: str) -> None:
    document = _document()
    if render == 'report':
        markdown = render_markdown(document, Gates(), check_gates(document, Gates()))
    else:
        markdown = render_comparison_markdown(compare_documents(document, _document(HOSTILE + ' 2')))
    assert [c for c in RAW if c in markdown] == []
    assert '![x](' not in markdown and '<img' not in markdown
    tokens = _tokens(markdown)
    types = {kind for kind, _ in tokens}
    assert types.isdisjoint({'image', 'link_open', 'em_open', 'strong_open', 's_open', 'code_inline'})
    html = {content.strip() for kind, content in tokens if kind.startswith('html')}
    assert {line for text in html for line in text.splitlines()} <= {'<br>', '<details><summary>', '</details>'} | {
        line for text in html for line in text.splitlines() if line.startswith('<details><summary>')
    }
    tables: list[list[str]] = [[]]
    for line in markdown.splitlines():
        if line.startswith('|'):
            tables[-1].append(line)
        elif tables[-1]:
            tables.append([])
    for table in filter(None, tables):  # a pipe from the data never adds a column
        assert len({len(re.findall(r'(?<!\\)\|', row)) for row in table}) == 1, table


def test_a_markdown_cell_reads_back_as_the_text() -> None:
    html = MarkdownIt('commonmark').render(markdown_cell(MARKDOWN))
    assert html == (
        '<p>![x](http://host/track.png) [link](http://host) &lt;img src=x&gt; *em* _u_ `code` ~~s~~ $x$ a|b</p>\n'
    )
    assert markdown_cell('lookup_order') == 'lookup_order'  # an underscore inside a word needs no escape


def test_junit_stays_well_formed_and_carries_the_text() -> None:
    document = _document()
    xml = render_junit(document, Gates(), check_gates(document, Gates()))
    root = ET.fromstring(xml)
    case = root[0][0]
    assert case.get('classname') == visible(f'case {HOSTILE}')
    failure = next(c for c in root[0] if c.find('failure') is not None).find('failure')
    assert failure is not None
    assert failure.get('message') == one_line(f'called {HOSTILE}').split('\\n')[0]
    assert [c for c in RAW if c in xml] == []


def test_json_carries_the_text_exactly() -> None:
    document = _document()
    assert json.loads(dump_document(document))['cases'][0]['name'] == f'case {HOSTILE}'


def test_the_comparison_table_shows_data_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '400')
    out = _Terminal()
    print_comparison(compare_documents(_document(), _document(HOSTILE + ' 2')), make_console(out))
    text = out.getvalue()
    for raw in ('\x1b]0;', '\x1b[2J', '\x07', '\x9b', '\u202e', '\ud800'):
        assert raw not in text
    assert MARKUP in text


@pytest.mark.parametrize('name', ['[/x]', '[bold red]x[/bold red]', '\x1b]0;title\x07', 'tool\ud800'])
def test_a_hostile_trace_through_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    """Tool and case names from a real trace file, every report format, no crash."""
    monkeypatch.setenv('COLUMNS', '250')
    trace = hostile_trace(
        tmp_path / 't.otlp.jsonl',
        name.replace('\ud800', 'SURROGATE'),
        case=f'case {name}'.replace('\ud800', 'SURROGATE'),
        argument=MARKDOWN,
        result=ESCAPES,
    )
    # The trace writer cannot encode a lone surrogate; JSON can, as an escape.
    trace.write_text(trace.read_text(encoding='utf-8').replace('SURROGATE', '\\ud800'), encoding='utf-8')
    evaluators = tmp_path / 'e.yaml'
    evaluators.write_text(f'- ToolCorrectness: [{json.dumps("other")}]\n', encoding='utf-8')
    files = {kind: tmp_path / f'report.{kind}' for kind in ('json', 'xml', 'md')}
    argv = ['run', '--evaluators', str(evaluators), str(trace), '--reasons', '--name', f'suite {name}']
    argv += ['--json', str(files['json']), '--junit', str(files['xml']), '--markdown', str(files['md'])]
    done = run_cli(capsys, *argv)
    assert done.code == 1, done.err
    assert [c for c in RAW if c in done.out + done.err] == []
    assert visible(name) in done.out
    assert json.loads(files['json'].read_text(encoding='utf-8'))['cases'][0]['name'] == f'case {name}'
    ET.parse(files['xml'])
    assert [c for c in RAW if c in files['md'].read_text(encoding='utf-8')] == []
