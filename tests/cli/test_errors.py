"""Bad input: one clear line on stderr naming the file (and line, or evaluator), exit status 2, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import DATASET, run_cli, traces

GOOD_DATASET = 'name: d\ncases:\n- name: refund\n  inputs: x\nevaluators:\n- MaxToolCalls: 6\n'


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run, check the exit status is 2 with one error line and no traceback, and return that line."""
    done = run_cli(capsys, *argv)
    assert done.code == 2, (done.out, done.err)
    assert 'Traceback' not in done.err
    lines = done.err.rstrip('\n').splitlines()
    assert lines[-1].startswith('agentic-evals-otel'), done.err
    return lines[-1]


def _file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding='utf-8')
    return str(path)


# Dataset and evaluators files.


def test_missing_dataset(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / 'nope.yaml'
    assert (
        _error(capsys, 'run', str(missing), traces('baseline')) == f'agentic-evals-otel: error: {missing}: no such file'
    )


def test_dataset_is_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = _error(capsys, 'run', str(tmp_path), traces('baseline'))
    assert line == f'agentic-evals-otel: error: {tmp_path}: is a directory, not a dataset file'


@pytest.mark.parametrize(
    ('name', 'text', 'message'),
    [
        (
            'bad.yaml',
            'name: x\ncases:\n  - name: a\n    inputs: [1\n',
            ":5: invalid YAML: expected ',' or ']', but got '<stream end>'",
        ),
        ('bad.json', '{"name": "x",\n "cases": [}\n', ':2: invalid JSON: Expecting value (column 12)'),
        ('empty.yaml', '', ': the file is empty'),
        ('list.yaml', '- 1\n- 2\n', ': expected a dataset (a mapping with `cases:`), got a list'),
        ('no-inputs.yaml', 'name: x\ncases:\n- name: a\n', ': cases.0.inputs: Field required'),
        ('extra.yaml', 'name: x\ncases: []\ncolour: red\n', ': colour: Extra inputs are not permitted'),
        (
            'no-cases.yaml',
            'name: x\ncases: []\nevaluators: [MaxToolCalls: 3]\n',
            ': the dataset has no cases (to score every trace with its evaluators, pass it with --evaluators)',
        ),
        (
            'dupes.yaml',
            'name: x\ncases:\n- {name: a, inputs: 1}\n- {name: a, inputs: 2}\n',
            ": Duplicate case name: 'a'",
        ),
    ],
)
def test_unusable_dataset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = _file(tmp_path, name, text)
    assert _error(capsys, 'run', path, traces('baseline')) == f'agentic-evals-otel: error: {path}{message}'


def test_unknown_evaluator_in_the_dataset(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _file(tmp_path, 'd.yaml', GOOD_DATASET.replace('MaxToolCalls: 6', 'MaxToolCals: 6'))
    line = _error(capsys, 'run', path, traces('baseline'))
    assert line.startswith(
        f"agentic-evals-otel: error: {path}:6: unknown evaluator 'MaxToolCals' in the dataset evaluators;"
        " did you mean 'MaxToolCalls'? (known: "
    )
    known = line.split('(known: ')[1].rstrip(')').split(', ')
    assert {'ArgumentCorrectness', 'Contains', 'HasMatchingSpan', 'MaxToolCalls', 'TrajectoryMatch'} <= set(known)
    assert known == sorted(known)


def test_unknown_evaluator_in_a_case(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _file(tmp_path, 'd.yaml', 'cases:\n- name: refund\n  inputs: x\n  evaluators: [ToolCorrect: [a]]\n')
    line = _error(capsys, 'run', path, traces('baseline'))
    assert line.startswith(
        f"agentic-evals-otel: error: {path}:4: unknown evaluator 'ToolCorrect' in case 'refund';"
        " did you mean 'ToolCorrectness'? (known: "
    )


@pytest.mark.parametrize(
    ('name', 'text', 'meant'),
    [
        (
            'd.yaml',
            'cases:\n- name: a\n  inputs: x\n  evaluators:\n  - MaxToolCalls: 3\n  - toolcorectness: [a]\n',
            ':6:',
        ),
        ('d.json', '{"cases": [{"name": "a", "inputs": "x", "evaluators": [{"ToolCorectnes": ["a"]}]}]}', ':'),
    ],
)
def test_a_mistyped_evaluator_name_gets_a_did_you_mean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, meant: str
) -> None:
    path = _file(tmp_path, name, text)
    line = _error(capsys, 'run', path, traces('baseline'))
    assert f'{path}{meant} unknown evaluator ' in line
    assert "in case 'a'; did you mean 'ToolCorrectness'? (known: " in line


def test_a_name_like_nothing_known_gets_only_the_known_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _file(tmp_path, 'e.yaml', 'evaluators:\n- Zzyzx: 3\n')
    line = _error(capsys, 'run', '--evaluators', path, traces('baseline'))
    assert line.startswith(
        f"agentic-evals-otel: error: {path}:2: unknown evaluator 'Zzyzx' in the dataset evaluators (known: "
    )
    assert 'did you mean' not in line


def test_bad_evaluator_arguments(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _file(tmp_path, 'd.yaml', GOOD_DATASET.replace('MaxToolCalls: 6', 'MaxToolCalls: {budget: 6}'))
    line = _error(capsys, 'run', path, traces('baseline'))
    assert line == (
        f"agentic-evals-otel: error: {path}: evaluator 'MaxToolCalls' in the dataset evaluators: bad arguments:"
        " MaxToolCalls.__init__() got an unexpected keyword argument 'budget'"
    )


@pytest.mark.parametrize(
    ('text', 'message'),
    [
        ('name: x\n', ': expected an `evaluators:` list, got a mapping'),
        ('evaluators: []\n', ': `evaluators:` must be a non-empty list'),
        (
            'evaluators: [MaxToolCalls: 3]\ncases: []\n',
            ": unexpected key(s) 'cases': --evaluators takes only an `evaluators:` list (pass a dataset as DATASET)",
        ),
        ('- Nope\n', ":1: unknown evaluator 'Nope' in the dataset evaluators (known: "),
    ],
)
def test_unusable_evaluators_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str) -> None:
    path = _file(tmp_path, 'evaluators.yaml', text)
    line = _error(capsys, 'run', '--evaluators', path, traces('baseline'))
    assert line.startswith(f'agentic-evals-otel: error: {path}{message}')


# Trace files.


def test_missing_trace_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / 'gone.jsonl'
    assert _error(capsys, 'run', str(DATASET), str(missing)) == f'agentic-evals-otel: error: {missing}: no such file'


def test_truncated_trace_file_names_the_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = Path(traces('baseline')).read_text(encoding='utf-8').splitlines()
    path = _file(tmp_path, 'cut.jsonl', '\n'.join([*lines[:2], lines[2][:100]]))
    line = _error(capsys, 'run', str(DATASET), path)
    assert line.startswith(f'agentic-evals-otel: error: {path}:3: invalid JSON')


@pytest.mark.parametrize(
    ('name', 'text', 'message'),
    [
        ('empty.jsonl', '', 'empty file'),
        ('notes.txt', 'hello\n', "unknown format: text that is not JSON (it starts with 'hello\\n')"),
    ],
)
def test_unreadable_trace_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = _file(tmp_path, name, text)
    where = f'{path}:1' if text else str(path)  # the first line is the one that is not a trace
    assert _error(capsys, 'run', str(DATASET), path) == f'agentic-evals-otel: error: {where}: {message}'


def test_glob_matching_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pattern = str(tmp_path / '*.jsonl')
    assert (
        _error(capsys, 'run', str(DATASET), pattern)
        == f'agentic-evals-otel: error: {pattern}: no files match this pattern'
    )


# Flags.


def test_min_score_naming_no_result(capsys: pytest.CaptureFixture[str]) -> None:
    line = _error(capsys, 'run', str(DATASET), traces('baseline'), '--min-score', 'TrajectoryMatc=0.8')
    assert line == (
        "agentic-evals-otel: error: --min-score TrajectoryMatc: no score or assertion is named 'TrajectoryMatc'"
        ' (available: ArgumentCorrectness, MaxModelRequests, MaxToolCalls, ToolCorrectness, TrajectoryMatch,'
        ' billing_tools, support_trajectory)'
    )


@pytest.mark.parametrize(
    ('argv', 'message'),
    [
        (
            ['--min-score', 'TrajectoryMatch'],
            "argument --min-score: expected NAME=X (e.g. TrajectoryMatch=0.8), got 'TrajectoryMatch'",
        ),
        (['--min-score', 'TrajectoryMatch=high'], "argument --min-score: 'high' is not a number"),
        (['--min-score', 'TrajectoryMatch=nan'], "argument --min-score: 'nan' is not a finite number"),
        (
            ['--max-fail-rate', '1.5'],
            "argument --max-fail-rate: expected a fraction between 0 and 1 (or a percentage), got '1.5'",
        ),
        (
            ['--max-fail-rate=-5%'],
            "argument --max-fail-rate: expected a fraction between 0 and 1 (or a percentage), got '-5%'",
        ),
        (['--colour'], 'unknown flag --colour'),
    ],
)
def test_bad_run_flags(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    line = _error(capsys, 'run', str(DATASET), traces('baseline'), *argv)
    assert line in (f'agentic-evals-otel run: error: {message}', f'agentic-evals-otel: error: {message}')


def test_run_without_traces(capsys: pytest.CaptureFixture[str]) -> None:
    line = _error(capsys, 'run', str(DATASET))
    assert line == (
        'agentic-evals-otel: error: run needs DATASET and at least one TRACES argument (or --evaluators FILE and TRACES)'
    )


def test_report_into_a_missing_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / 'no' / 'report.xml'
    line = _error(capsys, 'run', str(DATASET), traces('baseline'), '--junit', str(target))
    assert line == f'agentic-evals-otel: error: {target}: cannot write: directory {target.parent} does not exist'


@pytest.mark.parametrize(
    ('argv', 'message'),
    [
        ([], 'agentic-evals-otel: error: the following arguments are required: COMMAND'),
        (
            ['grade'],
            'agentic-evals-otel: error: unknown command grade; the commands are run, inspect, compare, render, schema',
        ),
        (['compare', 'a.json'], 'agentic-evals-otel compare: error: the following arguments are required: CANDIDATE'),
        (
            ['compare', 'a.json', 'b.json', '--tolerance', '-1'],
            "agentic-evals-otel compare: error: argument --tolerance: expected a tolerance >= 0, got '-1'",
        ),
        (['inspect'], 'agentic-evals-otel inspect: error: the following arguments are required: TRACES'),
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    line = _error(capsys, *argv)
    # argparse quotes choices differently across Python versions
    assert line.replace("'", '') == message.replace("'", '')


# compare and inspect inputs.


def _report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / 'good.json'
    assert run_cli(capsys, 'run', str(DATASET), traces('baseline'), '--json', str(path)).code == 0
    return str(path)


@pytest.mark.parametrize(
    ('text', 'message'),
    [
        ('', ': the file is empty'),
        ('{"schema": "agentic-evals/report@1",\n "name": }', ':2: invalid JSON: Expecting value (column 10)'),
        ('[1, 2]', ': expected a JSON object with "schema": "agentic-evals/report@1", got list'),
        ('{"name": "x"}', ': expected "schema": "agentic-evals/report@1", got None (write reports with `run --json`)'),
        (
            json.dumps(
                {
                    'schema': 'agentic-evals/report@1',
                    'name': 'x',
                    'cases': [{'name': 'a', 'scores': {'s': {'value': 'high'}}}],
                }
            ),
            ': cases.0.scores.s.value: Input should be a valid number',
        ),
    ],
)
def test_unreadable_report(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str) -> None:
    good = _report(tmp_path, capsys)
    bad = _file(tmp_path, 'bad.json', text)
    assert _error(capsys, 'compare', good, bad) == f'agentic-evals-otel: error: {bad}{message}'


def test_missing_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / 'baseline.json'
    line = _error(capsys, 'compare', str(missing), _report(tmp_path, capsys))
    assert line == f'agentic-evals-otel: error: {missing}: cannot read: No such file or directory'


def test_inspect_missing_file_and_unknown_trace_id(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / 'x.jsonl'
    assert _error(capsys, 'inspect', str(missing)) == f'agentic-evals-otel: error: {missing}: no such file'
    line = _error(capsys, 'inspect', traces('baseline'), '--trace-id', 'ffff')
    assert line == f"agentic-evals-otel: error: no trace with an id starting 'ffff' found in {traces('baseline')}"


def test_report_path_that_cannot_be_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / 'taken'
    target.mkdir()
    line = _error(capsys, 'run', str(DATASET), traces('baseline'), '--markdown', str(target))
    assert line == f'agentic-evals-otel: error: {target}: cannot write: Is a directory'


def test_two_runs_of_the_same_cases_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Scoring one of two matching traces silently could hide a regression: refuse, naming both."""
    support = Path(__file__).resolve().parents[2] / 'fixtures' / 'support'
    done = run_cli(
        capsys,
        'run',
        str(support / 'dataset.yaml'),
        str(support / 'baseline.otlp.jsonl'),
        str(support / 'regressed.otlp.jsonl'),
    )
    assert done.code == 2
    assert "case 'refund' matches 2 traces by case_name attribute: baseline (" in done.err
    assert '(pass the traces of one run)' in done.err
    assert 'Traceback' not in done.err


@pytest.mark.parametrize(
    ('entry', 'problem'),
    [
        (
            'TrajectoryMatch: {expected_trajectory: [a], order: sideways}',
            "order must be one of 'in_order', 'exact', 'any_order'; got 'sideways'",
        ),
        ('ToolCorrectness: lookup_order', "expected_tools must be a list of tool names, got 'lookup_order'"),
        ('MaxToolCalls: -3', 'max_calls must be a whole number >= 0, got -3'),
    ],
)
def test_a_bad_evaluator_setting_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, entry: str, problem: str
) -> None:
    evaluators = tmp_path / 'evaluators.yaml'
    evaluators.write_text(f'evaluators:\n- {entry}\n')
    support = Path(__file__).resolve().parents[2] / 'fixtures' / 'support'
    done = run_cli(capsys, 'run', '--evaluators', str(evaluators), str(support / 'baseline.otlp.jsonl'))
    assert done.code == 2
    assert problem in done.err
    assert 'Traceback' not in done.err


def test_a_trace_file_where_the_dataset_belongs_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    support = Path(__file__).resolve().parents[2] / 'fixtures' / 'support'
    done = run_cli(capsys, 'run', str(support / 'baseline.otlp.jsonl'), str(support / 'dataset.yaml'))
    assert done.code == 2
    assert done.err.strip().endswith('this is a trace file, not a dataset: DATASET comes first, then TRACES')


@pytest.mark.parametrize(
    ('entry', 'problem'),
    [
        (
            'TopicAdherence: {reference_topics: [orders], agent: 3}',
            'TopicAdherence: agent must be a string or None, got 3',
        ),
        ('TopicAdherence: orders', "TopicAdherence: reference_topics must be a non-empty list of topics, got 'orders'"),
        (
            'TopicAdherence: {reference_topics: [orders], mode: f2}',
            "TopicAdherence: mode must be one of 'precision', 'recall', 'f1'; got 'f2'",
        ),
        (
            'AgentGoalAccuracy: {use_expected_output: maybe}',
            "AgentGoalAccuracy: use_expected_output must be true or false, got 'maybe'",
        ),
        (
            'AgentGoalAccuracy: {model: 3}',
            "AgentGoalAccuracy: model must be a model name (e.g. 'openai:gpt-4o'), a pydantic-ai Model or None, got 3",
        ),
        (
            'TrajectoryJudge: {rubric: r, score: true}',
            'TrajectoryJudge: score must be false or a mapping with evaluation_name and include_reason (both optional),'
            ' got True',
        ),
        (
            'TrajectoryJudge: {rubric: r, model_settings: [0]}',
            'TrajectoryJudge: model_settings must be a mapping of setting names to values, got [0]',
        ),
    ],
)
def test_a_bad_judge_setting_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, entry: str, problem: str
) -> None:
    name = entry.split(':')[0]
    path = _file(tmp_path, 'evaluators.yaml', f'evaluators:\n- {entry}\n')
    line = _error(capsys, 'run', '--evaluators', path, traces('baseline'))
    assert (
        line
        == f'agentic-evals-otel: error: {path}: evaluator {name!r} in the dataset evaluators: bad arguments: {problem}'
    )


@pytest.mark.parametrize('command', ['run', 'inspect'])
def test_a_stray_file_in_a_trace_folder_is_skipped_with_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    folder = tmp_path / 'runs'
    folder.mkdir()
    (folder / 'trace.otlp.jsonl').write_bytes(Path(traces('baseline')).read_bytes())
    (folder / 'notes.txt').write_text('hello\n', encoding='utf-8')
    argv = ['run', str(DATASET), str(folder), '--no-progress'] if command == 'run' else ['inspect', str(folder)]
    outcome = run_cli(capsys, *argv)
    assert outcome.code in (0, 1)
    warnings = [line for line in outcome.err.splitlines() if 'notes.txt' in line]
    assert warnings == [
        f'agentic-evals-otel: warning: {folder / "notes.txt"}:1: skipped, not a trace file'
        " (unknown format: text that is not JSON (it starts with 'hello\\n'))"
    ]
