"""The committed JSON Schema of `agentic-evals/report@1`: equal to the one the types give, and true of real reports.

Real reports come from the CLI on the bundled fixtures (a dataset, evaluators alone, every framework,
a conversation), and from `Dataset.evaluate` in-process; each is validated as written to disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agentic_evals.reports.schema import COMMITTED, report_schema, schema_text

from ..cli import DATASET, ROOT, run_cli, traces

FRAMEWORK_TRACES = sorted((ROOT / 'fixtures' / 'frameworks').glob('*/*.otlp.jsonl'))


@pytest.fixture(scope='module')
def validator() -> Draft202012Validator:
    schema = json.loads(COMMITTED.read_text(encoding='utf-8'))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_the_committed_schema_is_the_one_the_types_give() -> None:
    assert COMMITTED.read_text(encoding='utf-8') == schema_text(), (
        'docs/schema/report-1.schema.json is out of date: run `python -m agentic_evals.reports.schema`'
    )


def test_the_schema_names_the_version_and_requires_it() -> None:
    schema = report_schema()
    assert schema['title'] == 'agentic-evals/report@1'
    assert schema['properties']['schema'] == {'const': 'agentic-evals/report@1', 'title': 'Schema', 'type': 'string'}
    assert schema['required'] == ['schema', 'name']
    case = schema['$defs']['CaseResult']['properties']
    assert case['trace_id']['description'] == 'The evaluated trace (32 hex digits), when known.'
    assert {'timeline', 'alignments', 'span_id'} <= set(case)


def _errors(validator: Draft202012Validator, document: Any) -> list[str]:
    return [f'{"/".join(map(str, e.absolute_path))}: {e.message}' for e in validator.iter_errors(document)]


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *argv: str) -> Any:
    report = tmp_path / 'report.json'
    outcome = run_cli(capsys, 'run', *argv, '--json', str(report), '--allow-failures', '--no-progress')
    assert outcome.code == 0, outcome.err
    return json.loads(report.read_text(encoding='utf-8'))


@pytest.mark.parametrize('variant', ['baseline', 'regressed'])
def test_dataset_reports_are_valid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, validator: Draft202012Validator, variant: str
) -> None:
    document = _run(capsys, tmp_path, str(DATASET), traces(variant))
    assert _errors(validator, document) == []
    refund = next(c for c in document['cases'] if c['name'] == 'refund')
    assert refund['timeline']['calls'] and refund['alignments']  # the new parts are there to validate


def test_a_report_with_case_failures_and_evaluator_errors_is_valid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, validator: Draft202012Validator
) -> None:
    dataset = tmp_path / 'dataset.yaml'
    dataset.write_text(
        'cases:\n- {name: refund, inputs: x}\n- {name: nowhere, inputs: y}\n'
        'evaluators:\n- TrajectoryMatch: [lookup_order]\n- ArgumentCorrectness: {tool_name: x, expected_arguments: {a: 1}}\n',
        encoding='utf-8',
    )
    document = _run(capsys, tmp_path, str(dataset), traces('baseline'))
    assert document['failures'] and document['failures'][0]['name'] == 'nowhere'
    assert _errors(validator, document) == []


@pytest.mark.parametrize('path', FRAMEWORK_TRACES, ids=lambda p: f'{p.parent.name}/{p.name}')
def test_framework_reports_are_valid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, validator: Draft202012Validator, path: Path
) -> None:
    evaluators = tmp_path / 'evaluators.yaml'
    evaluators.write_text(
        'evaluators:\n- MaxToolCalls: 50\n- ToolCallMatch: {expected_calls: [{name: get_weather}], mode: superset}\n'
        '- MaxTokens: 100000\n',
        encoding='utf-8',
    )
    document = _run(capsys, tmp_path, '--evaluators', str(evaluators), str(path))
    assert document['cases']
    assert _errors(validator, document) == []


def test_a_conversation_report_is_valid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, validator: Draft202012Validator
) -> None:
    folder = ROOT / 'fixtures' / 'conversations'
    document = _run(
        capsys, tmp_path, str(folder / 'dataset.yaml'), str(folder / 'chats.otlp.jsonl'), '--group-by', 'conversation'
    )
    assert _errors(validator, document) == []


IN_PROCESS = """
import json, sys
from typing import Any
import logfire
from pydantic_evals import Case, Dataset
from support_agent import run_support_case_async
from agentic_evals import MaxToolCalls, TrajectoryMatch, capture
from agentic_evals.reports.case_trace import case_details, case_trees
from agentic_evals.reports.document import document_from_report, dump_document

logfire.configure(send_to_logfire=False, console=False)  # pydantic-evals records its case spans only then


async def task(name: str) -> str:
    return await run_support_case_async(name)


dataset = Dataset[str, str, Any](
    name='support',
    cases=[Case(name='refund', inputs='refund'), Case(name='order_status', inputs='order_status')],
    evaluators=[TrajectoryMatch(['lookup_order'], threshold=0.5), MaxToolCalls(5)],
)
with capture() as captured:
    report = dataset.evaluate_sync(task, progress=False)
trees = case_trees(captured.spans)


def details(case: Any) -> Any:
    tree = trees(case)
    return None if tree is None else case_details(tree, case)


sys.stdout.write(dump_document(document_from_report(report, details)))
"""


@pytest.mark.slow
def test_an_in_process_report_is_valid(validator: Draft202012Validator) -> None:
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT / 'fixtures'), str(ROOT)])}
    done = subprocess.run([sys.executable, '-c', IN_PROCESS], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    refund = next(c for c in document['cases'] if c['name'] == 'refund')
    # the task's spans only: the support agent and its billing sub-agent, none of the evaluators' spans
    assert [a['path'] for a in refund['timeline']['agents']] == [['support'], ['support', 'billing']]
    assert refund['span_id'] == refund['timeline']['agents'][0]['span_id']
    assert len(refund['trace_id']) == 32 and refund['trace_id'].strip('0')
    assert refund['alignments'][0]['evaluator'] == 'TrajectoryMatch'
    assert _errors(validator, document) == []


def test_the_schema_rejects_what_a_reader_rejects(validator: Draft202012Validator) -> None:
    good: dict[str, Any] = {'schema': 'agentic-evals/report@1', 'name': 'r', 'cases': [{'name': 'a'}]}
    assert _errors(validator, good) == []
    assert _errors(validator, {'name': 'r'}) == [": 'schema' is a required property"]
    assert _errors(validator, {**good, 'schema': 'agentic-evals/report@2'})
    bad_case = {**good, 'cases': [{'name': 'a', 'assertions': {'x': {'value': 'yes'}}}]}
    assert _errors(validator, bad_case) == ["cases/0/assertions/x/value: 'yes' is not of type 'boolean'"]
    bad_call = {**good, 'cases': [{'name': 'a', 'timeline': {'calls': [{'name': 't', 'status': 'maybe'}]}}]}
    assert any('maybe' in e for e in _errors(validator, bad_call))
