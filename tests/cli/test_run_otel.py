"""`run --emit-otel` and `--otel-file`: the results as `gen_ai.evaluation.result` events, beside the verdict.

The events go to a real OTLP/HTTP receiver on loopback (decoded with opentelemetry-proto); a failed
export is one warning line and leaves the exit status to the gates.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from ..reports.otlp_receiver import HttpReceiver, free_port
from . import DATASET, run_cli, traces

EVENT = 'gen_ai.evaluation.result'


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith('OTEL_'):
            monkeypatch.delenv(name)
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_TIMEOUT', '2')


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[HttpReceiver]:
    with HttpReceiver() as r:
        monkeypatch.setenv('OTEL_EXPORTER_OTLP_ENDPOINT', r.endpoint)
        yield r


def _records(receiver: HttpReceiver) -> list[LogRecord]:
    return [
        r
        for request in receiver.requests
        for rl in request.resource_logs
        for sl in rl.scope_logs
        for r in sl.log_records
    ]


def _attributes(record: LogRecord) -> dict[str, object]:
    values: dict[str, object] = {}
    for kv in record.attributes:
        kind = kv.value.WhichOneof('value')
        values[kv.key] = getattr(kv.value, kind) if kind else None
    return values


def test_every_result_is_an_event_on_its_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, receiver: HttpReceiver
) -> None:
    report = tmp_path / 'report.json'
    done = run_cli(capsys, 'run', str(DATASET), traces('regressed'), '--emit-otel', '--json', str(report))
    assert done.code == 1  # the regressed run fails its gate; sending the events does not change that
    assert 'warning' not in done.err
    document = json.loads(report.read_text(encoding='utf-8'))
    expected = {
        (case['name'], name)
        for case in document['cases']
        for kind in ('scores', 'assertions', 'labels')
        for name in case[kind]
    }
    records = _records(receiver)
    seen = {
        (str(_attributes(r)['agentic_evals_otel.case']), str(_attributes(r)['gen_ai.evaluation.name'])) for r in records
    }
    assert len(records) == len(expected) and seen == expected
    refund = next(c for c in document['cases'] if c['name'] == 'refund')
    failed = next(
        r
        for r in records
        if _attributes(r)['agentic_evals_otel.case'] == 'refund'
        and _attributes(r)['gen_ai.evaluation.name'] == 'ArgumentCorrectness'
    )
    assert failed.trace_id.hex() == refund['trace_id'] and failed.span_id.hex() == refund['span_id']
    attributes = _attributes(failed)
    assert attributes['event.name'] == EVENT
    assert attributes['gen_ai.evaluation.score.label'] == 'fail'
    assert attributes['gen_ai.evaluation.score.value'] == 0.0
    assert attributes['gen_ai.evaluation.explanation'] == refund['assertions']['ArgumentCorrectness']['reason']
    assert attributes['agentic_evals_otel.dataset'] == 'support_agent'


def test_the_file_holds_what_the_wire_carried(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, receiver: HttpReceiver
) -> None:
    path = tmp_path / 'events.otlp.jsonl'
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--emit-otel', '--otel-file', str(path))
    assert done.code == 0, done.err
    lines = [json.loads(line) for line in path.read_text(encoding='utf-8').splitlines()]
    in_file = [r for line in lines for rl in line['resourceLogs'] for sl in rl['scopeLogs'] for r in sl['logRecords']]
    on_wire = _records(receiver)
    assert len(in_file) == len(on_wire) > 0
    assert [(r['traceId'], r['spanId'], r['timeUnixNano']) for r in in_file] == [
        (r.trace_id.hex(), r.span_id.hex(), str(r.time_unix_nano)) for r in on_wire
    ]


def test_a_file_alone_needs_no_collector(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / 'events.otlp.jsonl'
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--otel-file', str(path))
    assert done.code == 0 and done.err == ''
    assert path.read_text(encoding='utf-8').count('"gen_ai.evaluation.name"') > 0


def test_an_export_nobody_receives_is_a_warning(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_ENDPOINT', f'http://127.0.0.1:{free_port()}')
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--emit-otel')
    assert done.code == 0  # the gates passed: a collector that is down does not fail the run
    [warning] = done.err.splitlines()
    assert warning.startswith('agentic-evals-otel: warning: could not send ')
    assert 'evaluation events to http://127.0.0.1:' in warning


def test_a_collector_that_refuses_is_a_warning(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with HttpReceiver(mode='error') as refusing:
        monkeypatch.setenv('OTEL_EXPORTER_OTLP_ENDPOINT', refusing.endpoint)
        done = run_cli(capsys, 'run', str(DATASET), traces('regressed'), '--emit-otel')
    assert done.code == 1  # the gates' verdict, not the collector's
    [warning] = done.err.splitlines()
    assert warning.startswith('agentic-evals-otel: warning: could not send ') and '500' in warning


def test_bad_otel_settings_are_said_before_any_work(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/json')
    report = tmp_path / 'report.json'
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--emit-otel', '--json', str(report))
    assert done.code == 2 and not report.exists()
    assert done.err == (
        "agentic-evals-otel: error: OTLP protocol 'http/json' is not supported for events: use http/protobuf or grpc\n"
    )
    done = run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--otel-file', str(tmp_path / 'no' / 'events'))
    assert done.code == 2 and done.err.startswith('agentic-evals-otel: error: ') and 'events' in done.err
