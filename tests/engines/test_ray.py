"""The Ray engine against the local one, on a real local Ray cluster (started once for the module).

Every test runs the same command with `--engine ray` and with the local engine and compares what a
user gets: the JSON report, JUnit, Markdown, the exit status, the error line; the results part
files hold each case's results once, even after a worker is killed mid-run.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.test import TestModel

from agentic_evals import MaxToolCalls, TrajectoryJudge
from agentic_evals.cli import main
from agentic_evals.engines.local import run_local
from agentic_evals.engines.ray import run_ray
from agentic_evals.engines.work import Job
from agentic_evals.offline.suite import Suite
from agentic_evals.reports.document import document_chunks
from agentic_evals.reports.stream import ReportBuilder

from .ray_helpers import FIXTURES, REPO, KillOnce, write_split

ray = pytest.importorskip('ray')
pytestmark = pytest.mark.slow

S3_ENV = {'AWS_ACCESS_KEY_ID': 'testing', 'AWS_SECRET_ACCESS_KEY': 'testing', 'AWS_EC2_METADATA_DISABLED': 'true'}
"""Credentials the S3 server takes (any), for the driver and the workers; no instance metadata is asked for."""

BUDGETS = 'evaluators:\n  - MaxToolCalls: 6\n  - MaxModelRequests: 4\n  - NoLoops\n'


@pytest.fixture(scope='module', autouse=True)
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A local cluster of 2 CPUs; its workers import this test package (the killers live in it)."""
    marker_dir = tmp_path_factory.mktemp('kills')
    path = os.pathsep.join(dict.fromkeys([str(REPO), *sys.path]))
    env = {'PYTHONPATH': path, 'AGENTIC_EVALS_TEST_KILLS': str(marker_dir), **S3_ENV}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={'env_vars': env})
    yield marker_dir
    ray.shutdown()


def run(capsys: pytest.CaptureFixture[str], out: Path, *argv: str) -> tuple[int, dict[str, Any], str]:
    """Status, the files written (JSON report parsed; JUnit, Markdown as text) and stderr of one `run`."""
    out.mkdir(parents=True, exist_ok=True)
    status = main(
        [
            'run',
            *argv,
            '--json',
            str(out / 'report.json'),
            '--junit',
            str(out / 'junit.xml'),
            '--markdown',
            str(out / 'summary.md'),
            '--no-progress',
        ]
    )
    captured = capsys.readouterr()
    written: dict[str, Any] = {}
    if (out / 'report.json').exists():
        written['json'] = json.loads((out / 'report.json').read_text())
        written['junit'] = (out / 'junit.xml').read_text()
        written['markdown'] = (out / 'summary.md').read_text()
    return status, written, captured.err


def both(capsys: pytest.CaptureFixture[str], tmp_path: Path, *argv: str) -> tuple[Any, Any]:
    local = run(capsys, tmp_path / 'local', *argv)
    on_ray = run(capsys, tmp_path / 'ray', *argv, '--engine', 'ray')
    return local, on_ray


@pytest.mark.parametrize(
    'argv',
    [
        pytest.param(['{fixtures}/support/dataset.yaml', '{fixtures}/support/baseline.otlp.jsonl'], id='dataset'),
        pytest.param(['{fixtures}/support/dataset.yaml', '{fixtures}/support/regressed.otlp.pb.gz'], id='regressed'),
        pytest.param(['--evaluators', '{budgets}', '{fixtures}'], id='every-fixture'),
    ],
)
def test_the_fixtures_report_as_locally(capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]) -> None:
    budgets = tmp_path / 'budgets.yaml'
    budgets.write_text(BUDGETS)
    argv = [arg.format(fixtures=FIXTURES, budgets=budgets) for arg in argv]
    (status, written, err), (ray_status, ray_written, ray_err) = both(capsys, tmp_path, *argv)
    assert written['json']['cases'] or written['json']['failures']
    assert ray_written == written
    assert ray_status == status
    assert sorted(ray_err.splitlines()) == sorted(err.splitlines())


def test_traces_split_over_files_and_lines_report_as_locally(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    traces = tmp_path / 'traces'
    traces.mkdir()
    write_split(traces, files=9, seed=3)
    budgets = tmp_path / 'budgets.yaml'
    budgets.write_text(BUDGETS)
    status, written, _ = run(
        capsys,
        tmp_path / 'local',
        '--evaluators',
        str(budgets),
        str(traces / 'part-*'),
        '--results',
        str(tmp_path / 'local.jsonl'),
    )
    ray_status, ray_written, _ = run(
        capsys,
        tmp_path / 'ray',
        '--evaluators',
        str(budgets),
        str(traces / 'part-*'),
        '--engine',
        'ray',
        '--results',
        str(tmp_path / 'results'),
        '--results-format',
        'parquet',
    )
    assert len(written['json']['cases']) > 10
    assert ray_written == written
    assert ray_status == status
    # The results part files hold the local --results records, each once. Their `case` is the name before
    # the report tells repeated names apart (the driver does that, in key order); `trace_id` does it here.
    import pyarrow.parquet as pq

    local = [json.loads(line) for line in (tmp_path / 'local.jsonl').read_text().splitlines()]
    on_ray = []
    for path in sorted((tmp_path / 'results').iterdir()):
        assert path.name.startswith('part-') and path.suffix == '.parquet'
        for record in pq.read_table(path).to_pylist():
            on_ray.append({**record, 'value': json.loads(record['value'])})
    for record in local:
        record['case'] = record['case'].removesuffix(f' ({record["trace_id"][:8]})')
    key = lambda record: json.dumps(record, sort_keys=True)  # noqa: E731
    assert sorted(on_ray, key=key) == sorted(local, key=key)


def test_a_dataset_whose_cases_need_a_second_pass(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Cases found by trace id (a weaker rule than case_name) are scored in the second pass; one finds none."""
    traces = tmp_path / 'traces'
    traces.mkdir()
    write_split(traces, files=4, seed=5)
    ids = ['03c00000000000000000000000000005', '00000000000001000000000200000001']
    cases = ''.join(
        f'  - name: by-id-{number}\n    inputs: null\n    metadata: {{trace_id: {trace_id!r}}}\n'
        for number, trace_id in enumerate(ids)
    )
    dataset = tmp_path / 'dataset.yaml'
    dataset.write_text(
        f'name: by-id\ncases:\n{cases}  - name: none\n    inputs: null\n    metadata: {{trace_id: {"f" * 32!r}}}\n{BUDGETS}'
    )
    (status, written, err), (ray_status, ray_written, ray_err) = both(capsys, tmp_path, str(dataset), str(traces))
    assert len(written['json']['cases']) == 2 and len(written['json']['failures']) == 1
    assert ray_written == written
    assert ray_status == status
    assert ray_err == err and 'matched no case' in err


def test_a_bad_file_is_the_same_one_line_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    traces = tmp_path / 'traces'
    traces.mkdir()
    write_split(traces, files=4)
    (traces / 'part-02.otlp.pb').write_bytes(b'\x0a\x05\x0a\x03\x0a\x01')  # truncated protobuf
    budgets = tmp_path / 'budgets.yaml'
    budgets.write_text(BUDGETS)
    (status, _, err), (ray_status, _, ray_err) = both(capsys, tmp_path, '--evaluators', str(budgets), str(traces))
    assert status == ray_status == 2
    assert ray_err == err
    assert err.startswith(f'agentic-evals-otel: error: {traces}/part-02.otlp.pb: byte ')
    assert len(err.splitlines()) == 1


def result_counts(directory: Path) -> dict[tuple[str, str], int]:
    """(trace id, result name) -> how many records the results part files hold for it."""
    counts: dict[tuple[str, str], int] = {}
    for path in directory.iterdir():
        assert path.name.startswith('part-') and path.suffix == '.jsonl', path
        for line in path.read_text().splitlines():
            record = json.loads(line)
            key = (record['trace_id'], record['name'])
            counts[key] = counts.get(key, 0) + 1
    return counts


def document_text(job: Job, sources: list[str], engine: str, **options: Any) -> str:
    with ReportBuilder('kills', rename=True) as builder:
        if engine == 'ray':
            run_ray(job, sources, builder, **options)
        else:
            run_local(job, sources, builder)
        return ''.join(document_chunks(builder.document()))


@pytest.mark.parametrize('judged', [False, True], ids=['task', 'judge-actor'])
def test_a_killed_worker_is_retried_without_losing_or_doubling_a_case(
    tmp_path: Path, cluster: Path, judged: bool
) -> None:
    """KillOnce SIGKILLs the Ray worker process scoring the 5th case, once: a task, or an actor of the judges' pool."""
    traces = tmp_path / 'traces'
    traces.mkdir()
    write_split(traces, files=5)
    marker = cluster / f'killed-{judged}'
    evaluators: list[Any] = [MaxToolCalls(6), KillOnce(str(marker), after=5)]
    if judged:
        evaluators.append(TrajectoryJudge('The agent answers the question.', model=TestModel()))
    job = Job.of(Suite('kills', tmp_path / 'kills.yaml', None, tuple(evaluators)))
    local = document_text(job, [str(traces)], 'local')
    on_ray = document_text(job, [str(traces)], 'ray', results=str(tmp_path / 'results'), judge_concurrency=2)
    assert marker.exists()  # a worker was killed
    assert on_ray == local
    cases = json.loads(local)['cases']
    counts = result_counts(tmp_path / 'results')
    assert set(counts.values()) == {1}
    assert len(counts) == sum(len(case['assertions']) + len(case['scores']) for case in cases)


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str]]:
    """A real S3 protocol server on loopback (moto's), its filesystem and the URI query that reaches it."""
    server_module = pytest.importorskip('moto.server')
    from pyarrow import fs

    logging.getLogger('werkzeug').setLevel(logging.ERROR)
    for name, value in S3_ENV.items():
        monkeypatch.setenv(name, value)
    server = server_module.ThreadedMotoServer(ip_address='127.0.0.1', port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    query = f'?endpoint_override={host}:{port}&scheme=http&region=us-east-1'
    filesystem = fs.S3FileSystem(
        endpoint_override=f'{host}:{port}', scheme='http', region='us-east-1', allow_bucket_creation=True
    )
    filesystem.create_dir('traces')
    yield filesystem, query
    server.stop()


def store_reports_as_locally(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, filesystem: Any, bucket: str, query: str, seed: int
) -> Path:
    """Split traces put under `split/` in the store's `traces` bucket (`bucket`, as a URI names it) and run on
    Ray over the prefix and over a pattern: the local run's report, and every case in the `--results` parts.
    Returns the suite file it used."""
    from pyarrow.fs import FileSelector

    traces = tmp_path / 'traces'
    traces.mkdir()
    for path in write_split(traces, files=5, seed=seed):
        with filesystem.open_output_stream(f'traces/split/{path.name}', compression=None) as out:
            out.write(path.read_bytes())
    budgets = tmp_path / 'budgets.yaml'
    budgets.write_text(BUDGETS)
    status, written, _ = run(capsys, tmp_path / 'local', '--evaluators', str(budgets), str(traces))
    assert len(written['json']['cases']) > 10
    results = f'{bucket}/results/{query}'
    for source in (f'{bucket}/split/{query}', f'{bucket}/split/part-*{query}'):
        on_ray = run(
            capsys, tmp_path / 'ray', '--evaluators', str(budgets), source, '--engine', 'ray', '--results', results
        )
        assert on_ray[:2] == (status, written)
    listed = [info.path for info in filesystem.get_file_info(FileSelector('traces/results'))]
    assert listed and all(path.startswith('traces/results/part-') and path.endswith('.jsonl') for path in listed)
    records = [json.loads(line) for path in listed for line in filesystem.open_input_stream(path).read().splitlines()]
    assert len({record['trace_id'] for record in records}) == len(written['json']['cases'])
    return budgets


def test_object_storage_traces_and_results(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, s3: tuple[Any, str]
) -> None:
    filesystem, query = s3
    budgets = store_reports_as_locally(capsys, tmp_path, filesystem, 's3://traces', query, seed=11)

    with filesystem.open_output_stream('traces/split/part-03.otlp.jsonl') as out:
        out.write(b'{"resourceSpans": 1}\n')
    bad = run(capsys, tmp_path / 'bad', '--evaluators', str(budgets), f's3://traces/split/{query}', '--engine', 'ray')
    assert bad[0] == 2
    assert bad[2] == (
        f'agentic-evals-otel: error: s3://traces/split/part-03.otlp.jsonl{query}:1: resourceSpans is a number, not a list\n'
    )


def test_the_scale_page_runs_on_the_cluster(tmp_path: Path) -> None:
    """docs/scale.md's Ray examples (skipped by tests/test_docs.py: starting Ray takes most of a page's
    time budget) run here, every block of the page in order, on this module's cluster."""
    page = (REPO / 'docs' / 'scale.md').read_text(encoding='utf-8')
    assert page.count('test="skip" engine="ray"') == 2
    runnable = tmp_path / 'scale.md'
    runnable.write_text(page.replace('test="skip" engine="ray"', 'engine="ray"'), encoding='utf-8')
    work = tmp_path / 'work'
    work.mkdir()
    env = {**os.environ, 'PYTHONPATH': str(REPO), 'RAY_ADDRESS': ray.get_runtime_context().gcs_address}
    proc = subprocess.run(
        [sys.executable, str(REPO / 'tests' / 'test_docs.py'), str(runnable)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(path.name for path in (work / 'results').iterdir())
