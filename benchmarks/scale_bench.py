"""Scale: `agentic-evals-otel run` over 10k to 1M traces, one process, `--workers 2`, and Ray on this machine.

Usage (from the repository root):

    python -m benchmarks.scale_bench generate DIR --traces N [--lean] [--gzip] [--max-spans K]
    python -m benchmarks.scale_bench measure DIR [--workers 1 2] [--ray] [--dataset] [--files K]

**The traces** are real runs of the scripted support agent of `fixtures/support_agent.py` (a `support`
agent whose `ask_billing` tool runs the `billing` sub-agent), through pydantic-ai's instrumentation and
the OpenTelemetry SDK, with plans of 3 to 20 model responses, so 10 to 50 spans a trace. 200 real runs
are replicated under fresh trace and span ids and written as the Collector's `file` exporter rotates
them: 10,000 traces a file. Before writing, the attributes that repeat the tools' schemas on every
model request (`model_request_parameters`, `gen_ai.tool.definitions`, `logfire.json_schema`) are
dropped, as a Collector `attributes` processor configured to save storage does: they are a third of a
pydantic-ai trace and no evaluator reads them. `--lean` also drops the message history of every model
request but each agent run's first (the 1M set: 40 GB otherwise); tool calls keep their arguments and
results. `--gzip` writes `.gz` files.

**The suite**: `evaluators.yaml`, six evaluators run on every trace (`TrajectoryMatch`,
`ToolCorrectness`, `ArgumentCorrectness`, `MaxToolCalls`, `MaxModelRequests`, `MaxTokens`), and with
`--dataset` a JSON dataset with a case per trace (found by its root's `case_name`) and the same six.

**What is measured**: each configuration runs in a fresh interpreter (`run ... --no-progress
--results FILE`): wall time, traces per second, and the peak resident memory of the driver and of
the largest worker (`getrusage` for the pool's children; the local Ray cluster's processes, this
process's descendants, read from `/proc` before the cluster stops).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.workload import ROOT, Call, Plan, _run, _spans

PER_FILE = 10_000
REAL_RUNS = 200
DROPPED = ('model_request_parameters', 'gen_ai.tool.definitions', 'logfire.json_schema')
HISTORY = ('gen_ai.input.messages', 'pydantic_ai.all_messages')
EVALUATORS = """\
evaluators:
- TrajectoryMatch: {expected_trajectory: [lookup_order, check_refund_policy, ask_billing], order: in_order}
- ToolCorrectness: {expected_tools: [get_payment, issue_refund], agent: billing}
- ArgumentCorrectness: {tool_name: lookup_order, expected_arguments: {order_id: A100}}
- MaxToolCalls: 30
- MaxModelRequests: 30
- MaxTokens: 50000
"""


def plan_run(rng: random.Random, index: int) -> Plan:
    """A run of 3 to 20 model responses: 10 to 50 spans with the sub-agent's."""
    order_id = f'{rng.choice("ABCDEFGH")}{100 + index}'
    query = rng.choice(('refund time', 'return label', 'warranty', 'exchange'))
    responses = rng.randint(3, 20)
    steps: list[list[Call]] = [[('lookup_order', {'order_id': order_id})]]
    choices: list[Call] = [
        ('check_refund_policy', {'category': rng.choice(('books', 'toys', 'garden'))}),
        ('search_faq', {'query': query}),
        ('lookup_order', {'order_id': order_id}),
    ]
    billing_at = rng.randint(1, responses - 1) if rng.random() < 0.7 else -1
    for step in range(1, responses):
        if step == billing_at:
            steps.append([('ask_billing', {'request': f'refund order {order_id}, 25.00 EUR'})])
        else:
            steps.append([rng.choice(choices)])
    return Plan(
        prompt=f'Order {order_id} arrived broken; I want my money back. {query}?',
        steps=steps,
        expected=steps,
        regressed=index % 8 == 7,
        order_id=order_id,
        answer=f'Your refund for order {order_id} is on its way.',
    )


def real_runs(count: int, seed: int) -> list[dict[str, Any]]:
    """`count` real runs, one OTLP JSON request each."""
    from opentelemetry.sdk.trace import TracerProvider

    from agentic_evals import capture
    from agentic_evals.traces import write_otlp_json

    rng = random.Random(seed)
    provider = TracerProvider()
    requests = []
    scratch = Path(os.environ.get('TMPDIR', '/tmp')) / f'scale-real-{os.getpid()}.jsonl'
    for index in range(count):
        with capture(provider) as captured:
            asyncio.run(_run(plan_run(rng, index), f'case-{index}', provider))
        write_otlp_json(captured.spans, scratch)
        requests.append(json.loads(scratch.read_text()))
    scratch.unlink()
    return requests


def _trimmed(request: dict[str, Any], *, lean: bool) -> dict[str, Any]:
    seen_history: set[tuple[str, str]] = set()
    for span in _spans(request):
        kept = []
        for attribute in span.get('attributes', ()):
            key = attribute['key']
            if key in DROPPED:
                continue
            if lean and key in HISTORY:
                parent = span.get('parentSpanId', '')
                if (parent, key) in seen_history:
                    continue
                seen_history.add((parent, key))
            kept.append(attribute)
        span['attributes'] = kept
    return request


class _Template:
    """A real run as text, with its ids found once: a replica is one regex pass that swaps them."""

    def __init__(self, text: str) -> None:
        spans = _spans(json.loads(text))
        self.text = text
        self.trace_id = spans[0]['traceId']
        self.span_ids = [span['spanId'] for span in spans]
        self.case = next(
            a['value']['stringValue'] for span in spans for a in span.get('attributes', ()) if a['key'] == 'case_name'
        )
        keys = [self.trace_id, *self.span_ids, f'"{self.case}"', f'case: {self.case}"']
        pattern = re.compile('(' + '|'.join(re.escape(key) for key in keys) + ')')
        self.pieces = pattern.split(text)
        """Text and ids in turn (the ids at odd places): a replica joins them with fresh ids."""

    def replica(self, index: int, rng: random.Random) -> str:
        """The run under fresh ids and its own case name (the only parts that differ)."""
        name = f'case-{index:07d}'
        fresh = {self.trace_id: f'{rng.getrandbits(128) | 1:032x}', f'"{self.case}"': f'"{name}"'}
        fresh[f'case: {self.case}"'] = f'case: {name}"'
        fresh.update((span_id, f'{rng.getrandbits(64) | 1:016x}') for span_id in self.span_ids)
        pieces = self.pieces
        return ''.join([fresh[piece] if i % 2 else piece for i, piece in enumerate(pieces)]) + '\n'


def generate(
    directory: Path, traces: int, *, lean: bool, gzipped: bool, max_spans: int | None = None, seed: int = 5
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    cached = directory / 'real-runs.json'  # the real runs are most of a small set's time: made once
    if not cached.exists():
        cached.write_text(json.dumps(real_runs(min(REAL_RUNS, traces), seed)))
    runs = json.loads(cached.read_text())
    templates = [_Template(json.dumps(_trimmed(r, lean=lean), separators=(',', ':'))) for r in runs]
    if max_spans is not None:  # the smallest runs only: per-case costs weigh most there
        templates = [t for t in templates if len(t.span_ids) <= max_spans]
    spans = [len(t.span_ids) for t in templates]
    print(f'{len(templates)} real runs, {min(spans)} to {max(spans)} spans ({sum(spans) / len(spans):.1f} on average)')
    rng = random.Random(seed)
    opener = gzip.open if gzipped else open
    for start in range(0, traces, PER_FILE):
        name = f'traces-{start // PER_FILE:04d}.otlp.jsonl' + ('.gz' if gzipped else '')
        kwargs = {'compresslevel': 1} if gzipped else {}
        with opener(directory / name, 'wt', encoding='utf-8', **kwargs) as out:  # type: ignore[operator]
            for index in range(start, min(start + PER_FILE, traces)):
                out.write(templates[index % len(templates)].replica(index, rng))
    (directory / 'evaluators.yaml').write_text(EVALUATORS)
    cases = [{'name': f'case-{i:07d}', 'inputs': None} for i in range(traces)]
    evaluators = [
        {'TrajectoryMatch': {'expected_trajectory': ['lookup_order', 'check_refund_policy', 'ask_billing'],
                             'order': 'in_order'}},
        {'ToolCorrectness': {'expected_tools': ['get_payment', 'issue_refund'], 'agent': 'billing'}},
        {'ArgumentCorrectness': {'tool_name': 'lookup_order', 'expected_arguments': {'order_id': 'A100'}}},
        {'MaxToolCalls': 30},
        {'MaxModelRequests': 30},
        {'MaxTokens': 50000},
    ]  # fmt: skip
    dataset = {'name': 'scale', 'cases': cases, 'evaluators': evaluators}
    (directory / 'dataset.json').write_text(json.dumps(dataset))
    size = sum(p.stat().st_size for p in directory.glob('traces-*'))
    print(f'{traces:,} traces in {time.perf_counter() - started:.0f} s: {size / 1e9:.2f} GB')


def _descendant_peaks() -> list[int]:
    """Peak resident memory (KiB, `VmHWM`) of every process descended from this one: a local Ray
    cluster's raylet, object store and workers (and nothing of another cluster on the machine)."""
    parents: dict[int, int] = {}
    for stat in Path('/proc').glob('[0-9]*/stat'):
        try:
            fields = stat.read_text().rsplit(')', 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    mine = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                grew = True
    peaks = []
    for pid in mine - {os.getpid()}:
        try:
            status = Path(f'/proc/{pid}/status').read_text()
        except OSError:
            continue
        peaks += [int(line.split()[1]) for line in status.splitlines() if line.startswith('VmHWM:')]
    return peaks


def inner(argv: list[str], ray: bool) -> None:
    """One run in this interpreter; prints what it measured as one JSON line."""
    from agentic_evals.cli import main

    if ray:
        import ray as ray_module

        ray_module.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter()
    code = main(argv)
    wall = time.perf_counter() - started
    workers = _descendant_peaks() if ray else [resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]
    if ray:
        ray_module.shutdown()
    driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({'code': code, 'wall': wall, 'driver_kib': driver, 'worker_kib': max(workers, default=0)}))


def _dataset(directory: Path, traces: int) -> Path:
    """The dataset of the first `traces` cases (one per trace of the first files), cut from the whole one."""
    path = directory / f'dataset-{traces}.json'
    if not path.exists():
        whole = json.loads((directory / 'dataset.json').read_text())
        path.write_text(json.dumps({**whole, 'cases': whole['cases'][:traces]}))
    return path


def _lines(path: str) -> int:
    with gzip.open(path, 'rb') if path.endswith('.gz') else open(path, 'rb') as file:
        return sum(1 for _ in file)


def measure(directory: Path, workers: list[int], *, ray: bool, dataset: bool, files_limit: int | None = None) -> None:
    files = sorted(str(p) for p in directory.glob('traces-*'))[:files_limit]
    traces = sum(_lines(f) for f in files)
    suite = [str(_dataset(directory, traces))] if dataset else ['--evaluators', str(directory / 'evaluators.yaml')]
    configs = [(f'{w} worker{"s" if w > 1 else ""}', ['--workers', str(w)], False) for w in workers]
    if ray:
        configs.append(('Ray (local, 2 CPUs)', ['--engine', 'ray'], True))
    print(f'{traces:,} traces in {len(files)} files, {"dataset" if dataset else "evaluators"} mode')
    print('| engine | wall | traces/s | driver peak | largest worker peak |')
    print('| --- | ---: | ---: | ---: | ---: |')
    for label, extra, on_ray in configs:
        results = directory / 'results.jsonl'
        argv = ['run', *suite, *files, '--no-progress', *extra]
        argv += ['--results', str(directory / 'results-ray')] if on_ray else ['--results', str(results)]
        command = [sys.executable, '-m', 'benchmarks.scale_bench', 'inner', json.dumps(argv)] + (
            ['--ray'] if on_ray else []
        )
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
        lines = [line for line in done.stdout.splitlines() if line.startswith('{"code"')]
        if not lines:
            print(f'| {label} | failed: {done.stderr.strip().splitlines()[-1:]} |')
            continue
        got = json.loads(lines[-1])
        worker = f'{got["worker_kib"] / 1024:.0f} MB' if got['worker_kib'] and label != '1 worker' else '-'
        print(
            f'| {label} | {got["wall"]:.1f} s | {traces / got["wall"]:,.0f} | {got["driver_kib"] / 1024:.0f} MB |'
            f' {worker} |'
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.scale_bench')
    commands = parser.add_subparsers(dest='command', required=True)
    make = commands.add_parser('generate')
    make.add_argument('directory', type=Path)
    make.add_argument('--traces', type=int, default=100_000)
    make.add_argument('--lean', action='store_true')
    make.add_argument('--gzip', action='store_true')
    make.add_argument('--max-spans', type=int, help='only the real runs of at most N spans')
    run = commands.add_parser('measure')
    run.add_argument('directory', type=Path)
    run.add_argument('--workers', type=int, nargs='*', default=[1, 2])
    run.add_argument('--ray', action='store_true')
    run.add_argument('--dataset', action='store_true')
    run.add_argument('--files', type=int, help=f'only the first N files ({PER_FILE:,} traces each)')
    one = commands.add_parser('inner')
    one.add_argument('argv')
    one.add_argument('--ray', action='store_true')
    args = parser.parse_args(argv)
    if args.command == 'generate':
        generate(args.directory, args.traces, lean=args.lean, gzipped=args.gzip, max_spans=args.max_spans)
    elif args.command == 'measure':
        measure(args.directory, args.workers, ray=args.ray, dataset=args.dataset, files_limit=args.files)
    else:
        inner(json.loads(args.argv), args.ray)
    return 0


if __name__ == '__main__':
    sys.exit(main())
