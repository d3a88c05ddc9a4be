"""Shared by the CLI tests: trace files from real pydantic-ai runs, and running `main()` in-process.

The traces are produced once per test session by the scripted agents in `fixtures/` (the support
agent in its baseline and regressed versions, and the foundation scenario), captured through an
OpenTelemetry SDK provider and saved with `write_otlp_json`, as a user would save them.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from scenario import run_scenario
from support_agent import CASES, run_support_case

from agentic_evals import capture, write_otlp_json
from agentic_evals.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / 'fixtures' / 'support' / 'dataset.yaml'
SUPPORT_CASES = list(CASES)


@functools.cache
def trace_files() -> Path:
    """A directory with `baseline.otlp.jsonl`, `regressed.otlp.jsonl` and `scenario.otlp.jsonl`."""
    directory = Path(tempfile.mkdtemp(prefix='agentic-evals-cli-'))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    provider = TracerProvider()
    for variant in ('baseline', 'regressed'):
        with capture(provider) as captured:
            for name in CASES:
                run_support_case(name, variant=variant, tracer_provider=provider)
        write_otlp_json(captured.spans, directory / f'{variant}.otlp.jsonl')
    with capture(provider) as captured:
        run_scenario(version=5, tracer_provider=provider)
    write_otlp_json(captured.spans, directory / 'scenario.otlp.jsonl')
    return directory


def traces(name: str) -> str:
    return str(trace_files() / f'{name}.otlp.jsonl')


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    @property
    def last_line(self) -> str:
        return self.out.rstrip('\n').splitlines()[-1]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Outcome:
    """`main(argv)` in this process, with what it printed."""
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def hostile_trace(path: Path, tool: str, *, case: str = 'hostile', argument: str = 'x', result: str = 'ok') -> Path:
    """A one-call trace whose case name, tool name, argument and result are `case`, `tool`, ... as given."""
    provider = TracerProvider()
    tracer = provider.get_tracer('test')
    agent = {'gen_ai.agent.name': 'helper', 'gen_ai.operation.name': 'invoke_agent', 'case_name': case}
    call = {
        'gen_ai.tool.name': tool,
        'gen_ai.tool.call.arguments': json.dumps({'query': argument}),
        'gen_ai.tool.call.result': result,
    }
    with (
        capture(provider) as captured,
        tracer.start_as_current_span('invoke_agent helper', attributes=agent),
        tracer.start_as_current_span(f'execute_tool {tool}', attributes=call),
    ):
        pass
    write_otlp_json(captured.spans, path)
    return path


def env() -> dict[str, str]:
    """The environment for a subprocess running this source tree."""
    return {**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')]))}
