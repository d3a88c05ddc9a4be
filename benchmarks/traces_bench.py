"""Load a generated 1M-span OTLP JSON lines file: speed against a bare JSON parse, and peak memory.

Usage (from the repository root): `python -m benchmarks.traces_bench [--spans N] [--keep DIR]`.

The file holds pydantic-ai-shaped runs (`benchmarks.trees.plan_run`, about 50 spans each: an
`invoke_agent` root, `chat` spans with tool definitions and output messages, `execute_tool` spans,
some failed with an exception event), one OTLP request per line as the Collector's file exporter
writes them. Every 200th trace is split over two lines with another trace in between, so the
loader has to merge and hold traces open across lines.

Each measurement runs in a fresh subprocess, so its peak RSS (`VmHWM`) is its own; speeds are per
CPU second of that process (`time.process_time`), which a busy shared machine disturbs less than
wall time (printed too). "x floor" compares CPU time per span with the floor's.

- floor: `json.loads` of every line, nothing kept (what any reader of this format must pay);
- load: `load_traces` over the file, every trace's `SpanTree` built and dropped;
- full: load, then `extract_trajectory` and the five evaluators on every trace;
- load 2x: `load_traces` over a file twice as big: streaming means the same peak memory.

`--fixtures` measures the bundled fixtures instead (`fixtures/support/*.otlp.jsonl` and
`fixtures/scenario/*.otlp.jsonl`, and their `.otlp.pb` twins), replicated under fresh trace ids to
`--traces` traces (default 10,000): loading against `json.loads` of the same lines (and `orjson`'s,
which the loader itself parses with, `json` deciding whatever orjson refuses or may read otherwise),
traces per CPU second, and the peak memory of loading the protobuf file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

SPANS = 1_000_000
SPLIT_EVERY = 200
BASE_PLANS = 64
"""Distinct runs planned; traces reuse them under fresh trace ids (ids and names are what differ)."""
PLACEHOLDER = 'TRACE-ID-PLACEHOLDER-32-CHARS-XX'
TOOLS_PER_RUN = 34


def _nanos(moment: datetime) -> str:
    return str(int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000)


def _encoded_spans(seed: int) -> list[dict[str, Any]]:
    from agentic_evals.traces._writer import _any_value  # the writer's encoder: one OTLP encoding

    from .trees import plan_run

    plan = plan_run(tool_spans=TOOLS_PER_RUN, seed=seed)
    spans = []
    for planned in plan.spans:
        encoded: dict[str, Any] = {
            'traceId': PLACEHOLDER,
            'spanId': f'{planned.span_id:016x}',
            'parentSpanId': '' if planned.parent_span_id is None else f'{planned.parent_span_id:016x}',
            'flags': 256,
            'name': planned.name,
            'kind': 1,
            'startTimeUnixNano': _nanos(planned.start),
            'endTimeUnixNano': _nanos(planned.end),
            'attributes': [{'key': key, 'value': _any_value(value)} for key, value in planned.attributes],
            'status': {},
        }
        if planned.status == 'error':
            encoded['status'] = {'code': 2, 'message': 'Please fix the arguments and try again.'}
            encoded['events'] = [
                {
                    'timeUnixNano': _nanos(planned.end),
                    'name': 'exception',
                    'attributes': [
                        {'key': 'exception.type', 'value': {'stringValue': 'ToolRetryError'}},
                        {'key': 'exception.message', 'value': {'stringValue': 'Please fix the arguments.'}},
                        {'key': 'exception.escaped', 'value': {'boolValue': False}},
                    ],
                }
            ]
        spans.append(encoded)
    return spans


def _line(spans: list[dict[str, Any]]) -> str:
    request = {
        'resourceSpans': [
            {
                'resource': {
                    'attributes': [
                        {'key': 'service.name', 'value': {'stringValue': 'support-agent'}},
                        {'key': 'telemetry.sdk.language', 'value': {'stringValue': 'python'}},
                    ]
                },
                'scopeSpans': [{'scope': {'name': 'pydantic-ai', 'version': '2.62.0'}, 'spans': spans}],
            }
        ]
    }
    return json.dumps(request, separators=(',', ':')) + '\n'


def generate(path: Path, spans: int, seed: int = 7) -> tuple[int, int]:
    """Write at least `spans` spans; returns (spans, traces) written."""
    bases = []
    for index in range(BASE_PLANS):
        encoded = _encoded_spans(index)
        half = len(encoded) // 2
        bases.append((len(encoded), _line(encoded), _line(encoded[:half]), _line(encoded[half:])))
    rng = random.Random(seed)
    written = traces = 0
    pending = ''
    with path.open('w') as stream:
        while written < spans:
            count, whole, first_half, second_half = bases[traces % BASE_PLANS]
            trace_id = f'{rng.getrandbits(128) | 1:032x}'
            if traces % SPLIT_EVERY == 0 and not pending:
                stream.write(first_half.replace(PLACEHOLDER, trace_id))
                pending = second_half.replace(PLACEHOLDER, trace_id)
            else:
                stream.write(whole.replace(PLACEHOLDER, trace_id))
                stream.write(pending)
                pending = ''
            written += count
            traces += 1
        stream.write(pending)
    return written, traces


# ---------------------------------------------------------------------------------------------
# Measurements, one per subprocess
# ---------------------------------------------------------------------------------------------


def _peak_mb() -> float:
    """This process's peak RSS. `VmHWM`, not `ru_maxrss`: Linux carries the latter over from the parent."""
    try:
        for line in Path('/proc/self/status').read_text().splitlines():
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # elsewhere: the best there is


def measure(kind: str, path: Path) -> dict[str, float]:
    if kind in ('floor', 'orjson'):  # a bare parse of every line, with each parser: nothing kept
        loads = json.loads
        if kind == 'orjson':
            import orjson

            loads = orjson.loads
        baseline = _peak_mb()
        wall, cpu = time.perf_counter(), time.process_time()
        spans = 0
        with path.open('rb') as stream:
            for line in stream:
                document = loads(line)
                for resource_spans in document['resourceSpans']:
                    for scope_spans in resource_spans['scopeSpans']:
                        spans += len(scope_spans['spans'])
        return {
            'cpu': time.process_time() - cpu,
            'wall': time.perf_counter() - wall,
            'spans': spans,
            'baseline_mb': baseline,
            'peak_mb': _peak_mb(),
        }

    if kind == 'cli':
        return _measure_cli(path)

    from agentic_evals import (
        ArgumentCorrectness,
        MaxModelRequests,
        MaxToolCalls,
        ToolCorrectness,
        TrajectoryMatch,
        evaluator_context,
        load_traces,
    )

    evaluators = [
        ToolCorrectness(['search', 'read_file', 'run_sql'], allow_extra=True),
        TrajectoryMatch(['search', 'read_file', 'write_file'], order='in_order'),
        ArgumentCorrectness('get_weather', {'city': 'Paris'}),
        MaxToolCalls(40),
        MaxModelRequests(20),
    ]
    full = kind == 'full'
    if kind == 'load-nolimit':  # before issue 12 a protobuf file was read whole, within MAX_DOCUMENT: lift it
        from agentic_evals.traces import _readers

        _readers.MAX_DOCUMENT = 2**40
    baseline = _peak_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    spans = traces = passed = 0
    for trace in load_traces(path):
        spans += len(trace.tree.nodes_by_id)
        traces += 1
        if full:
            context = evaluator_context(trace.tree)
            for evaluator in evaluators:
                reason = evaluator.evaluate(context)
                passed += reason.value is True or reason.value == 1.0
    return {
        'cpu': time.process_time() - cpu,
        'wall': time.perf_counter() - wall,
        'spans': spans,
        'traces': traces,
        'passed': passed,
        'baseline_mb': baseline,
        'peak_mb': _peak_mb(),
    }


CLI_EVALUATORS = """\
evaluators:
- ToolCorrectness: {expected_tools: [search, read_file, run_sql], allow_extra: true}
- TrajectoryMatch: [search, read_file, write_file]
- ArgumentCorrectness: {tool_name: get_weather, expected_arguments: {city: Paris}}
- MaxToolCalls: 40
- MaxModelRequests: 20
"""


def _measure_cli(path: Path) -> dict[str, float]:
    """`agentic-evals-otel run --evaluators FILE TRACES --json REPORT`, the command users run, in this process."""
    import contextlib
    import io

    from agentic_evals.cli import main as cli

    with tempfile.TemporaryDirectory() as scratch:
        evaluators, report = Path(scratch) / 'evaluators.yaml', Path(scratch) / 'report.json'
        evaluators.write_text(CLI_EVALUATORS)
        baseline = _peak_mb()
        wall, cpu = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            status = cli(
                ['run', '--evaluators', str(evaluators), str(path), '--json', str(report), '-q', '--no-progress']
            )
        cases = len(json.loads(report.read_text())['cases'])
        return {
            'cpu': time.process_time() - cpu,
            'wall': time.perf_counter() - wall,
            'traces': cases,
            'status': status,
            'baseline_mb': baseline,
            'peak_mb': _peak_mb(),
        }


# ---------------------------------------------------------------------------------------------
# The bundled fixtures, replicated (`--fixtures`)
# ---------------------------------------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parent.parent / 'fixtures'
_HEX_TRACE_ID = re.compile(r'"traceId":\s*"([0-9a-fA-F]{32})"')


def _fixture_files() -> list[Path]:
    """The fixtures' JSON lines files that have a protobuf twin (the same traces), so both files hold the same."""
    files = sorted((FIXTURES / 'support').glob('*.otlp.jsonl')) + sorted((FIXTURES / 'scenario').glob('*.otlp.jsonl'))
    return [file for file in files if file.with_name(file.name.replace('.jsonl', '.pb')).exists()]


def generate_fixtures(directory: Path, traces: int, seed: int = 9) -> tuple[Path, Path, int, int]:
    """The fixtures' JSON lines (and protobuf) replicated to at least `traces` traces under fresh ids.

    Returns (JSON lines file, protobuf file, traces, spans). The protobuf file is one
    `ExportTraceServiceRequest` holding every replica's `ResourceSpans`, as an OTLP/HTTP body would.
    """
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    templates: list[tuple[list[str], list[str], list[bytes], int]] = []
    for file in _fixture_files():
        lines = file.read_text().splitlines(keepends=True)
        ids = list(dict.fromkeys(match.lower() for line in lines for match in _HEX_TRACE_ID.findall(line)))
        request = ExportTraceServiceRequest()
        request.ParseFromString(file.with_name(file.name.replace('.jsonl', '.pb')).read_bytes())
        entries = [entry.SerializeToString() for entry in request.resource_spans]
        spans = sum(len(scope.spans) for entry in request.resource_spans for scope in entry.scope_spans)
        templates.append((lines, ids, entries, spans))
    rng = random.Random(seed)
    jsonl, protobuf = directory / 'fixtures.otlp.jsonl', directory / 'fixtures.otlp.pb'
    written = spans = replicas = 0
    with jsonl.open('w') as lines_out, protobuf.open('wb') as binary_out:
        while written < traces:
            lines, ids, entries, count = templates[replicas % len(templates)]
            fresh = {old: f'{rng.getrandbits(128) | 1:032x}' for old in ids}
            for line in lines:
                for old, new in fresh.items():
                    line = line.replace(old, new).replace(old.upper(), new)
                lines_out.write(line if line.endswith('\n') else line + '\n')
            for entry in entries:
                for old, new in fresh.items():
                    entry = entry.replace(bytes.fromhex(old), bytes.fromhex(new))
                binary_out.write(b'\x0a' + _varint(len(entry)) + entry)
            written += len(ids)
            spans += count
            replicas += 1
    return jsonl, protobuf, written, spans


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def fixtures_main(directory: Path, traces: int) -> None:
    started = time.perf_counter()
    jsonl, protobuf, written, spans = generate_fixtures(directory, traces)
    sizes = f'{jsonl.stat().st_size / 1e6:,.0f} MB of JSON lines, {protobuf.stat().st_size / 1e6:,.0f} MB of protobuf'
    print(f'generated {written:,} traces ({spans:,} spans; {sizes}) in {time.perf_counter() - started:.1f} s')
    print(f'machine: {_machine()}')
    kinds = ['floor', 'load']
    try:
        import orjson  # noqa: F401
    except ImportError:
        print('orjson is not installed: no orjson floor')
    else:
        kinds.insert(1, 'orjson')
    results = {kind: _run(kind, jsonl) for kind in kinds}
    results['protobuf'] = _run('load-nolimit', protobuf)
    print()
    print('| measurement | traces | CPU s | wall s | traces/s (CPU) | x json.loads | x orjson | peak RSS MB |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    for kind, result in results.items():
        count = result.get('traces', written)
        floor = f'{result["cpu"] / results["floor"]["cpu"]:.2f}x' if kind != 'protobuf' else '-'
        fast = f'{result["cpu"] / results["orjson"]["cpu"]:.2f}x' if 'orjson' in results and kind != 'protobuf' else '-'
        print(
            f'| {kind} | {int(count):,} | {result["cpu"]:.1f} | {result["wall"]:.1f} | {count / result["cpu"]:,.0f} '
            f'| {floor} | {fast} | {result["peak_mb"]:,.0f} |'
        )
    print(f'\ntotal {time.perf_counter() - started:.0f} s')


def _run(kind: str, path: Path) -> dict[str, float]:
    output = subprocess.run(
        [sys.executable, '-m', 'benchmarks.traces_bench', '--measure', kind, str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, float] = json.loads(output)
    return result


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path('/proc/cpuinfo').read_text().splitlines():
            if line.startswith('model name'):
                cpu = line.split(':', 1)[1].strip()
                break
    except OSError:
        pass
    system = f'{platform.system()} {platform.release()}'
    return f'{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {system}'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--spans', type=int, default=SPANS, help='spans in the main file (default: 1,000,000)')
    parser.add_argument('--keep', type=Path, help='write the files here and keep them (default: a temp dir)')
    parser.add_argument('--fixtures', action='store_true', help='measure the bundled fixtures, replicated')
    parser.add_argument('--traces', type=int, default=10_000, help='traces with --fixtures (default: 10,000)')
    parser.add_argument('--measure', nargs=2, metavar=('KIND', 'PATH'), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        kind, path = args.measure
        print(json.dumps(measure(kind, Path(path))))
        return

    with tempfile.TemporaryDirectory() as temporary:
        directory = args.keep or Path(temporary)
        directory.mkdir(parents=True, exist_ok=True)
        if args.fixtures:
            fixtures_main(directory, args.traces)
            return
        started = time.perf_counter()
        one, double = directory / 'spans-1x.jsonl', directory / 'spans-2x.jsonl'
        spans, traces = generate(one, args.spans)
        generate(double, 2 * args.spans, seed=8)
        size_mb = one.stat().st_size / 1e6
        print(f'generated {spans:,} spans in {traces:,} traces ({size_mb:,.0f} MB) and a 2x file', end='')
        print(f' in {time.perf_counter() - started:.1f} s')
        print(f'machine: {_machine()}')

        results = {kind: _run(kind, one) for kind in ('floor', 'load', 'full', 'cli')}
        results['load 2x'] = _run('load', double)
        results['cli 2x'] = _run('cli', double)
        for kind, file in (('cli', one), ('cli 2x', double)):  # the CLI reports cases, not spans
            results[kind]['spans'] = results['load' if file is one else 'load 2x']['spans']
        floor_rate = results['floor']['spans'] / results['floor']['cpu']
        print()
        print('| measurement | spans | CPU s | wall s | spans/s (CPU) | x floor | peak RSS MB | RSS above start MB |')
        print('|---|---:|---:|---:|---:|---:|---:|---:|')
        for kind, result in results.items():
            rate = result['spans'] / result['cpu']
            above = result['peak_mb'] - result['baseline_mb']
            print(
                f'| {kind} | {int(result["spans"]):,} | {result["cpu"]:.1f} | {result["wall"]:.1f} | {rate:,.0f} '
                f'| {floor_rate / rate:.2f}x | {result["peak_mb"]:,.0f} | {above:,.0f} |'
            )
        growth = results['load 2x']['peak_mb'] / results['load']['peak_mb']
        cli_growth = results['cli 2x']['peak_mb'] / results['cli']['peak_mb']
        print(f'\npeak RSS, 2x file / 1x file: load {growth:.2f}, cli {cli_growth:.2f} (streaming: about 1)')
        print(f'total {time.perf_counter() - started:.0f} s')


if __name__ == '__main__':
    main()
