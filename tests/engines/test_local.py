"""The local engine: one process or `--workers N`, the same report as the in-memory pipeline, no tree held."""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import random
import re
import signal
import tempfile
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import Evaluator, EvaluatorContext
from pydantic_evals.reporting import EvaluationReport, ReportCase

from agentic_evals import AgenticEvalsError, MaxToolCalls, evaluate_trace_files, load_traces
from agentic_evals.engines import local
from agentic_evals.offline.evaluate import scored_cases
from agentic_evals.offline.suite import Suite, load_dataset
from agentic_evals.reports.case_trace import case_details
from agentic_evals.reports.document import (
    AssertionResult,
    CaseFailure,
    CaseResult,
    ReportDocument,
    ScoreResult,
    document_from_report,
    dump_document,
)
from agentic_evals.reports.gates import Gates
from agentic_evals.reports.judge import check_gates, judged
from agentic_evals.reports.stream import ReportBuilder
from agentic_evals.traces._load import load_partition

from ..cli import DATASET, ROOT, run_cli, trace_files, traces

FIXTURES = ROOT / 'fixtures'
EVALUATORS = """\
evaluators:
  - MaxToolCalls: {max_calls: 3}
  - ToolCorrectness: {expected_tools: [lookup_order]}
  - TrajectoryMatch: {expected_trajectory: [lookup_order, check_refund_policy], order: in_order}
"""


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('COLUMNS', '250')


def split_spans(source: Path, into: list[Path], seed: int = 3) -> None:
    """Every span of `source` on a line of its own, dealt at random over the files of `into`, as a
    Collector's batching and rotation spread one trace over many lines and files."""
    rng = random.Random(seed)
    outs = [path.open('w', encoding='utf-8') for path in into]
    for line in source.read_text(encoding='utf-8').splitlines():
        for resource in json.loads(line)['resourceSpans']:
            for scope in resource['scopeSpans']:
                for span in scope['spans']:
                    request = {'resourceSpans': [{**resource, 'scopeSpans': [{**scope, 'spans': [span]}]}]}
                    rng.choice(outs).write(json.dumps(request) + '\n')
    for out in outs:
        out.close()


def run_outputs(capsys: pytest.CaptureFixture[str], tmp_path: Path, tag: str, *argv: str) -> dict[str, str]:
    """Every output of one `run`: its table, verdict and status, and each report file."""
    files = {flag: tmp_path / f'{tag}.{flag}' for flag in ('json', 'junit', 'markdown', 'results')}
    done = run_cli(capsys, 'run', *argv, *(a for flag, path in files.items() for a in (f'--{flag}', str(path))))
    outputs = {flag: path.read_text(encoding='utf-8') for flag, path in files.items()}
    return {**outputs, 'out': done.out, 'err': done.err, 'code': str(done.code)}


@pytest.mark.parametrize('workers', [2, 3])
def test_workers_give_the_report_one_process_gives_with_a_dataset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, workers: int
) -> None:
    sources = [traces('baseline'), traces('regressed')]
    one = run_outputs(capsys, tmp_path, 'one', str(DATASET), traces('regressed'))
    many = run_outputs(capsys, tmp_path, 'many', str(DATASET), traces('regressed'), '--workers', str(workers))
    assert many == one
    assert one['code'] == '1' and 'FAIL:' in one['out']
    # both variants at once: every case is ambiguous, and says so the same way
    done_one = run_cli(capsys, 'run', str(DATASET), *sources)
    done_many = run_cli(capsys, 'run', str(DATASET), *sources, '--workers', str(workers))
    assert (done_many.code, done_many.err) == (done_one.code, done_one.err) == (2, done_one.err)
    assert "case 'refund' matches 2 traces by case_name attribute" in done_one.err


def test_workers_give_the_report_one_process_gives_on_every_fixture(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    evaluators = tmp_path / 'evaluators.yaml'
    evaluators.write_text(EVALUATORS, encoding='utf-8')
    argv = ('--evaluators', str(evaluators), str(FIXTURES), str(trace_files()))
    one = run_outputs(capsys, tmp_path, 'one', *argv)
    many = run_outputs(capsys, tmp_path, 'many', *argv, '--workers', '2')
    assert many == one
    document = json.loads(one['json'])
    assert document['totals']['cases'] > 30  # every framework's fixtures, and the support runs
    names = [case['name'] for case in document['cases']]
    assert 'chats' in names and 'chats (00c00000)' in names  # repeated names told apart, the same way


def test_traces_split_over_lines_and_files_score_as_whole_ones(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    parts = [tmp_path / f'part-{i}.otlp.jsonl' for i in range(3)]
    split_spans(Path(traces('regressed')), parts)
    whole = run_outputs(capsys, tmp_path, 'whole', str(DATASET), traces('regressed'))
    for workers in ('1', '2'):
        split = run_outputs(capsys, tmp_path, f'split{workers}', str(DATASET), *map(str, parts), '--workers', workers)
        assert split == whole


def in_memory(dataset: Dataset[Any, Any, Any], sources: list[str]) -> ReportDocument:
    """The report as `run` made it before it streamed: every matched trace held, then one document."""
    details: dict[int, Any] = {}

    async def score() -> EvaluationReport[Any, Any, Any]:
        results = scored_cases(
            load_traces(*sources),
            dataset=dataset,
            on_scored=lambda case, trace: details.__setitem__(id(case), case_details(trace.tree, case)),
        )
        cases, failures = [], []
        async for result in results:
            (cases if isinstance(result, ReportCase) else failures).append(result)
        return EvaluationReport(name=dataset.name or '', cases=cases, failures=failures)

    report = asyncio.run(score())
    expected = {c.name: frozenset(e.get_default_evaluation_name() for e in c.evaluators) for c in dataset.cases}
    return document_from_report(report, lambda case: details.get(id(case)), expected)


def as_run(document: ReportDocument, suite: Suite) -> ReportDocument:
    """`document` with the verdicts `run` writes in its JSON report (its default gates)."""
    gates = Gates(expected=suite.expected_results())
    return judged(document, gates, check_gates(document, gates, known_names=suite.evaluation_names()))


def test_the_streamed_report_is_the_in_memory_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Cases found by each rule, and one by none: the same JSON as `evaluate_traces` and `document_from_report`."""
    loaded = list(load_traces(traces('baseline')))
    by_name = loaded[0]
    by_id = loaded[1]
    (tmp_path / 'by_file.otlp.jsonl').write_bytes(Path(traces('scenario')).read_bytes())
    dataset = Dataset[Any, Any, Any](
        name='rules',
        cases=[
            Case(name='by_input', inputs='Where is order B200?'),
            Case(name='by_id', inputs=None, metadata={'trace_id': by_id.trace_id.upper()}),
            Case(name='by_file', inputs=None),
            Case(name='nothing', inputs='never asked'),
        ],
    )
    dataset_file = tmp_path / 'rules.yaml'
    dataset.to_file(dataset_file)
    suite = load_dataset(dataset_file)
    assert suite.dataset is not None
    sources = [traces('baseline'), str(tmp_path / 'by_file.otlp.jsonl')]
    expected = dump_document(as_run(in_memory(suite.dataset, sources), suite))
    for workers in ('1', '2'):
        out = tmp_path / f'{workers}.json'
        done = run_cli(capsys, 'run', str(dataset_file), *sources, '--json', str(out), '--workers', workers)
        assert done.code == 1, done.err  # the case no trace was found for
        assert out.read_text(encoding='utf-8') == expected
    assert by_name.trace_id != by_id.trace_id
    assert [c['name'] for c in json.loads(expected)['cases']] == ['by_input', 'by_id', 'by_file']
    assert json.loads(expected)['failures'][0]['name'] == 'nothing'


@pytest.mark.parametrize(('renamed', 'reads'), [(False, 4), (True, 8)])
def test_no_trace_outlives_its_case(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, renamed: bool, reads: int
) -> None:
    """With a dataset too: when a trace is read, at most the one before it is still held, however many were
    matched. Cases found by `case_name` are scored in the first pass; renamed, they are found by their
    inputs, decided once every trace was seen, and scored in a second pass."""
    alive: list[weakref.ref[Any]] = []
    most = 0

    def watched(*sources: str, **kwargs: Any) -> Iterator[Any]:
        nonlocal most
        for trace in load_traces(*sources, **kwargs):
            gc.collect()
            most = max(most, sum(ref() is not None for ref in alive))
            alive.append(weakref.ref(trace.tree))
            yield trace

    monkeypatch.setattr(local, 'load_traces', watched)
    dataset = DATASET
    if renamed:
        dataset = tmp_path / 'asked.yaml'
        dataset.write_text(re.sub(r'(?m)^- name: (\w+)', r'- name: \1_asked', DATASET.read_text()), encoding='utf-8')
    done = run_cli(capsys, 'run', str(dataset), traces('baseline'), '--json', str(tmp_path / 'r.json'))
    assert done.code == 0, done.err
    assert len(alive) == reads
    assert most <= 1  # the one before, still named by the loops until the next arrives (all 4, before)
    assert json.loads((tmp_path / 'r.json').read_text())['totals']['cases'] == 4


def test_partitions_together_are_the_whole_load_in_its_order(tmp_path: Path) -> None:
    parts = [tmp_path / f'part-{i}.otlp.jsonl' for i in range(3)]
    split_spans(Path(traces('regressed')), parts, seed=8)
    files = [*map(str, parts), str(FIXTURES / 'frameworks')]
    whole = [(t.trace_id, len(list(t.tree)), t.sources, t.warnings) for t in load_traces(*files, on_warning=print)]
    for count in (1, 2, 3):
        placed = [
            (place, (t.trace_id, len(list(t.tree)), t.sources, t.warnings))
            for part in range(count)
            for place, t in load_partition(*files, part=part, parts=count, on_warning=print)
        ]
        assert [trace for _, trace in sorted(placed)] == whole
        assert sorted(place for place, _ in placed) == list(range(len(whole)))


def test_the_builder_gives_one_report_whatever_the_arrival_order() -> None:
    values = [0.1, 0.2, 0.3, 1e16, 1.0, -1e16, 0.7, 1 / 3]
    entries: list[CaseResult | CaseFailure] = [
        CaseResult(
            name=f'c{i}',
            scores={'s': ScoreResult(value)},
            assertions={'a': AssertionResult(i % 3 != 0)},
            metrics={'requests': i, 'cost': value},
        )
        for i, value in enumerate(values)
    ]
    entries.append(CaseFailure(name='lost', error='MissingTraceError: none'))
    rows = list(enumerate(entries))
    texts = set()
    for seed in range(5):
        random.Random(seed).shuffle(rows)
        with ReportBuilder('r') as builder:
            for key, entry in rows:
                builder.add((key,), entry)
            texts.add(dump_document(builder.document()))
    [text] = texts
    cases = [e for e in entries if isinstance(e, CaseResult)]
    failures = [e for e in entries if isinstance(e, CaseFailure)]
    assert text == dump_document(ReportDocument(name='r', cases=cases, failures=failures).with_derived())
    # exact: a plain sum of these values in this order loses 0.2 to rounding
    assert json.loads(text)['averages']['scores']['s'] == math.fsum(values) / len(values) != sum(values) / len(values)


def test_bad_scale_flags_are_one_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    base = ('run', str(DATASET), traces('baseline'))
    for argv, message in [
        (('--workers', '0'), "argument --workers: expected a whole number, 1 or more, got '0'"),
        (('--workers', 'two'), "argument --workers: expected a whole number, 1 or more, got 'two'"),
        (('--judge-concurrency', '0'), "argument --judge-concurrency: expected a whole number, 1 or more, got '0'"),
        (
            ('--judge-concurrency', '8'),
            '--judge-concurrency is for --engine ray (locally, cases are judged one at a time)',
        ),
        (('--address', 'auto'), '--address names a Ray cluster: use it with --engine ray'),
        (
            ('--group-by', 'conversation', '--workers', '2'),
            '--group-by conversation needs every turn in one process: leave out --workers and --engine',
        ),
    ]:
        done = run_cli(capsys, *base, *argv)
        assert done.code == 2
        assert done.err.strip().splitlines()[-1].endswith(message), done.err
    monkeypatch.setitem(__import__('sys').modules, 'ray', None)  # Ray not installed
    done = run_cli(capsys, *base, '--engine', 'ray')
    assert (done.code, done.err.strip()) == (
        2,
        "agentic-evals-otel: error: --engine ray needs Ray: pip install 'agentic-evals-otel[ray]'",
    )


def test_results_file_has_a_line_per_case_and_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / 'results.jsonl'
    done = run_cli(
        capsys, 'run', str(DATASET), traces('regressed'), '--results', str(out), '--json', str(tmp_path / 'r')
    )
    assert done.code == 1
    records = [json.loads(line) for line in out.read_text(encoding='utf-8').splitlines()]
    document = json.loads((tmp_path / 'r').read_text(encoding='utf-8'))
    expected = sum(len(c['assertions']) + len(c['scores']) + len(c['labels']) for c in document['cases'])
    assert len(records) == expected
    refund = [r for r in records if r['case'] == 'refund' and r['kind'] == 'assertion' and not r['value']]
    assert refund and refund[0]['evaluator'] == 'ArgumentCorrectness' and refund[0]['reason']
    assert {r['trace_id'] for r in records} == {c['trace_id'] for c in document['cases']}


@pytest.mark.parametrize('workers', [1, 2])
def test_from_python_the_document_is_the_commands(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, workers: int
) -> None:
    out = tmp_path / 'run.json'
    run_cli(capsys, 'run', str(DATASET), traces('regressed'), '--json', str(out))
    dataset = load_dataset(DATASET).dataset
    document = evaluate_trace_files(traces('regressed'), dataset=dataset, workers=workers, details=True)
    assert dump_document(as_run(document, load_dataset(DATASET))) == out.read_text(encoding='utf-8')
    assert document.totals.failed_cases == 3
    with pytest.raises(ValueError, match='not both'):
        evaluate_trace_files(traces('regressed'), dataset=dataset, evaluators=[MaxToolCalls(3)])


def test_spooled_cases_index_as_a_list_does() -> None:
    entries = [CaseResult(name='same', trace_id=f'{i:08x}' * 4) for i in range(5)]
    for rename in (False, True):
        with ReportBuilder('r', rename=rename) as builder:
            for key, entry in reversed(list(enumerate(entries))):
                builder.add((key,), entry)
            cases = builder.document().cases
            listed = list(cases)
            assert [c.name for c in listed] == (
                ['same', *(f'same ({i:08x})' for i in range(1, 5))] if rename else ['same'] * 5
            )
            assert [cases[0], cases[-1], cases[3]] == [listed[0], listed[-1], listed[3]]
            assert cases[1:4] == listed[1:4]
            with pytest.raises(IndexError):
                cases[5]


@dataclass
class DiesInAWorker(Evaluator[Any, Any, Any]):
    """Kills the process it runs in, unless that is the test's own: a worker lost to the OOM killer."""

    parent: int = 0

    def evaluate(self, ctx: EvaluatorContext[Any, Any, Any]) -> bool:
        if os.getpid() != self.parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return True


def test_a_worker_that_dies_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = traces('regressed')  # made (once, in the usual temporary directory) before it moves
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    with pytest.raises(AgenticEvalsError) as raised:
        evaluate_trace_files(source, evaluators=[DiesInAWorker(os.getpid())], workers=2)
    assert str(raised.value) == 'a worker process died (killed, or out of memory?); run again, with fewer --workers'
    assert list(tmp_path.iterdir()) == []  # not even the killed worker's spool file
    assert evaluate_trace_files(traces('regressed'), evaluators=[DiesInAWorker(os.getpid())]).totals.cases == 4


def test_partitions_share_ids_that_fix_some_bits() -> None:
    """Odd ids (a generator that keeps ids from being zero), sequential ids: every worker gets a share."""
    from agentic_evals.traces._load import partition_of

    rng = random.Random(1)
    for ids in (
        [f'{rng.getrandbits(128) | 1:032x}' for _ in range(1000)],
        [f'{i:032x}' for i in range(1, 1001)],
        [f'{i << 64:032x}' for i in range(1, 1001)],
    ):
        for parts in (2, 3, 8):
            counts = [0] * parts
            for trace_id in ids:
                counts[partition_of(trace_id, parts)] += 1
            assert min(counts) > 1000 / parts / 2, (parts, counts)
