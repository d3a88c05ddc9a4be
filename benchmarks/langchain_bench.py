"""Time agentic_evals' `tool_call_match` against LangChain agentevals' trajectory match, side by side.

Usage (from the repository root): `python -m benchmarks.langchain_bench [--quick] [--venv PATH] [--profile]`, or
`make bench-langchain`. Any Python 3.10+ starts it: agentevals is never a dependency of this project.

Like `scripts/langchain_reference.py` (whose pins it imports, so there is one list of them), the first process
creates a venv (default /tmp/agentevals-venv, shared with that script), installs the pinned agentevals there and
this checkout editable (`pip install -e`, from PyPI only), and re-runs this module under that venv's Python, where
both sides run in one process.

Each conversation pair (OpenAI chat messages, made from a fixed seed with 10, 100 and 1,000 tool calls) is scored
by `create_trajectory_match_evaluator(trajectory_match_mode=..., tool_args_match_mode=...)` in all four modes with
`exact` and `superset` arguments, and by our `tool_call_match(outputs, reference, mode=..., arguments=...)` with the
arguments mapped as docs/langchain.md says (LangChain's subset mode swaps subset and superset arguments; its
unordered mode with subset or superset arguments is our exact). Both sides get the raw messages: LangChain converts
them to its message format, ours reads them into a Trajectory, and both times count. LangChain normalises the
messages it is given in place, so every call on either side gets its own fresh copy (made outside the timed region).

Every call's value must be the same bool on both sides, or the run stops with exit status 1. Greedy pairing (where
LangChain can be wrong) is ruled out by construction: every call of a tool has a value no other call of that tool
has (the query, the URL, the path...), so a reference call is compatible with one output call at most. Missing the
speed target (ours at least as fast as LangChain on every row) is reported but does not change the exit status.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_SCRIPT = ROOT / 'scripts' / 'langchain_reference.py'
DEFAULT_VENV = Path('/tmp/agentevals-venv')
QUIET = {'LANGSMITH_TRACING': 'false', 'LANGCHAIN_TRACING_V2': 'false'}
"""No tracing to LangSmith (openevals wraps every scorer in `traceable`)."""

SEED = 20250612
SIZES = (10, 100, 1_000)
CALLS_PER_REPETITION = {10: 20, 100: 3, 1_000: 1}
"""Evaluations per side per timed repetition (times are per evaluation): a 10-call pair takes about 2 ms, where
one scheduler hiccup would decide a single evaluation. Each evaluation has its own fresh copy."""
REPEATS = {10: 21, 100: 21, 1_000: 11}
MODES = ('strict', 'unordered', 'subset', 'superset')
ARGS_MODES = ('exact', 'superset')
TARGET = 1.0


def reference_script() -> ModuleType:
    """`scripts/langchain_reference.py` as a module: the pins, the conversation format and the mode mapping."""
    spec = importlib.util.spec_from_file_location('langchain_reference', REFERENCE_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------
# Bootstrap: the venv, then this module again inside it
# ---------------------------------------------------------------------------------------------


def bootstrap(venv: Path, argv: Sequence[str]) -> int:
    """Create `venv` if needed, install the pinned agentevals and this checkout there, run this module in it."""
    pins: list[str] = reference_script().AGENTEVALS
    python = venv / 'bin' / 'python'
    if not python.exists():
        subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
    # The venv may hold another checkout (or none): install this one only when `agentic_evals` is not read from it.
    probe = subprocess.run(
        [str(python), '-c', 'import agentic_evals; print(agentic_evals.__file__)'],
        capture_output=True,
        text=True,
        cwd='/',
    )
    ours_here = probe.returncode == 0 and Path(probe.stdout.strip()).is_relative_to(ROOT)
    install = pins if ours_here else [*pins, '-e', str(ROOT)]  # one resolve, so the pins hold
    subprocess.run([str(python), '-m', 'pip', 'install', '-q', *install], check=True)
    env = {**os.environ, **QUIET}
    command = [str(python), '-m', 'benchmarks.langchain_bench', '--in-venv', *argv]
    return subprocess.run(command, cwd=ROOT, env=env).returncode


# ---------------------------------------------------------------------------------------------
# The conversations
# ---------------------------------------------------------------------------------------------

Call = dict[str, Any]  # {'name': ..., 'args': {...}}, as scripts/langchain_reference.py writes calls

TOPICS = ('otel spans', 'gen_ai semantic conventions', 'tool call retries', 'token budgets', 'agent handoffs')
CITIES = ('Paris', 'Lima', 'Oslo', 'Nairobi', 'Osaka')


def _search(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return {'query': f'{TOPICS[n % len(TOPICS)]} #{n}'}, {'limit': 10, 'lang': 'en'}


def _fetch(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return {'url': f'https://docs.example/guide/page-{n}'}, {'timeout': 30, 'headers': {'accept': 'text/html'}}


def _read_file(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return {'path': f'src/pkg/module_{n}.py'}, {'encoding': 'utf-8', 'max_bytes': 65536}


def _run_sql(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    query = f'SELECT id, total FROM orders WHERE customer_id = {n} ORDER BY created_at DESC'
    return {'query': query}, {'database': 'analytics', 'timeout_s': 5}


def _weather(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    day = (date(2025, 1, 1) + timedelta(days=n)).isoformat()
    return {'city': CITIES[n % len(CITIES)], 'date': day}, {'units': 'metric'}


def _send_email(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        {'to': ['ana@example.com'], 'subject': f'Weekly report #{n}'},
        {'cc': ['bo@example.com', 'cy@example.com'], 'body': 'Figures attached.'},
    )


def _calculator(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return {'expression': f'{n} * 1.2 + 7'}, {'precision': 4}


def _create_ticket(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return {'title': f'Flaky test in shard {n}', 'priority': 'high'}, {'labels': ['ci', 'bug'], 'assignee': 'ana'}


TOOLS: dict[str, tuple[Callable[[int], tuple[dict[str, Any], dict[str, Any]]], int]] = {
    'search': (_search, 6),
    'fetch': (_fetch, 4),
    'read_file': (_read_file, 3),
    'run_sql': (_run_sql, 3),
    'weather': (_weather, 1),
    'send_email': (_send_email, 1),
    'calculator': (_calculator, 1),
    'create_ticket': (_create_ticket, 1),
}
"""Each tool's arguments for the call with serial number n (required, optional) and its weight in the mix. A
required value holds n, so no two calls of a tool are comparable under any argument mode."""


def optional_arguments(name: str) -> dict[str, Any]:
    """A tool's optional arguments (the same for every call of it)."""
    return TOOLS[name][0](0)[1]


class Calls:
    """Calls of a weighted mix of tools, with serial numbers never used twice in one pair of conversations."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.serial = 0
        self.names = list(TOOLS)
        self.weights = [weight for _, weight in TOOLS.values()]

    def new(self) -> Call:
        """A call of a random tool, with about half of its optional arguments."""
        name = self.rng.choices(self.names, self.weights)[0]
        self.serial += 1
        required, optional = TOOLS[name][0](self.serial)
        args = {**required, **{key: value for key, value in optional.items() if self.rng.random() < 0.5}}
        return {'name': name, 'args': args}


@dataclass(frozen=True)
class Pair:
    """An agent's attempt and the reference, as OpenAI chat messages, serialised (each evaluation parses a copy)."""

    calls: int
    attempt: str
    outputs: str
    reference: str


def plan_pairs(size: int, rng: random.Random, conversation: Callable[[list[list[Call]]], list[Any]]) -> list[Pair]:
    """The reference of `size` calls and two attempts at it.

    - `replay`: the reference's calls, each response's calls in another order and each call's argument keys in
      another order: every mode passes, with either argument mode, on both sides (the most work for both).
    - `more`: the replay, plus 5 % extra calls (of new arguments, in existing responses) and one more optional
      argument on a tenth of the calls that left one out: only superset mode passes (with exact arguments only
      where no call got one); elsewhere LangChain can stop at the first difference.
    """
    calls = Calls(rng)
    reference: list[list[Call]] = []
    made = 0
    while made < size:  # one to four calls per model response (parallel calls), mean about 1.9
        count = min(rng.choices((1, 2, 3, 4), (45, 30, 15, 10))[0], size - made)
        reference.append([calls.new() for _ in range(count)])
        made += count

    def reordered(call: Call) -> Call:
        keys = list(call['args'])
        rng.shuffle(keys)
        return {'name': call['name'], 'args': {key: call['args'][key] for key in keys}}

    replay = [[reordered(call) for call in rng.sample(response, len(response))] for response in reference]
    more = [list(response) for response in replay]
    for response in more:
        for index, call in enumerate(response):
            missing = sorted(set(optional_arguments(call['name'])) - set(call['args']))
            if missing and rng.random() < 0.10:
                key = rng.choice(missing)
                response[index] = {
                    'name': call['name'],
                    'args': {**call['args'], key: optional_arguments(call['name'])[key]},
                }
    for _ in range(max(1, round(size * 0.05))):
        response = rng.choice(more)
        response.insert(rng.randint(0, len(response)), calls.new())
    expected = json.dumps(conversation(reference))
    return [
        Pair(size, 'replay', json.dumps(conversation(replay)), expected),
        Pair(size, 'more', json.dumps(conversation(more)), expected),
    ]


# ---------------------------------------------------------------------------------------------
# Timing (inside the venv)
# ---------------------------------------------------------------------------------------------


class Mismatch(Exception):
    """LangChain and ours gave different values (or not a bool) for the same row."""


@dataclass(frozen=True)
class Row:
    """One line of the table: a pair of conversations, LangChain's modes and ours for them."""

    pair: Pair
    mode: str
    args_mode: str
    ours_mode: str
    ours_args: str

    @property
    def name(self) -> str:
        return f'{self.pair.calls:,} calls, {self.pair.attempt}: {self.mode}, {self.args_mode} args'


@dataclass
class Measurement:
    row: Row
    repeats: int
    langchain_seconds: list[float] = field(default_factory=list)
    ours_seconds: list[float] = field(default_factory=list)
    value: bool | None = None

    @property
    def ratio(self) -> float:
        """The median over repetitions of LangChain/ours, both measured back to back (see benchmarks/run.py)."""
        return statistics.median(t / o for t, o in zip(self.langchain_seconds, self.ours_seconds, strict=True))

    @property
    def met(self) -> bool:
        return self.ratio >= TARGET


Evaluate = Callable[[Any, Any], Any]


def evaluators(row: Row) -> tuple[Evaluate, Evaluate]:
    """(LangChain's, ours): each takes (outputs, reference) messages and returns its whole result."""
    from agentevals.trajectory.match import create_trajectory_match_evaluator

    from agentic_evals import tool_call_match

    theirs = create_trajectory_match_evaluator(trajectory_match_mode=row.mode, tool_args_match_mode=row.args_mode)
    mode, arguments = row.ours_mode, row.ours_args

    def langchain(outputs: Any, reference: Any) -> Any:
        return theirs(outputs=outputs, reference_outputs=reference)

    def ours(outputs: Any, reference: Any) -> Any:
        return tool_call_match(outputs, reference, mode=mode, arguments=arguments)

    return langchain, ours


def fresh(pair: Pair, count: int) -> list[tuple[Any, Any]]:
    """`count` new copies of the pair's messages: nothing is shared between evaluations or sides."""
    return [(json.loads(pair.outputs), json.loads(pair.reference)) for _ in range(count)]


def run_side(evaluate: Evaluate, inputs: list[tuple[Any, Any]]) -> tuple[float, list[Any]]:
    """Seconds per evaluation over `inputs`, and the results; a collection before, the collector off inside."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        results = [evaluate(outputs, reference) for outputs, reference in inputs]
        elapsed = (time.perf_counter() - start) / len(inputs)
    finally:
        gc.enable()
    return elapsed, results


def agreed(row: Row, langchain_results: list[Any], ours_results: list[Any]) -> bool:
    values = {(type(r['score']), r['score']) for r in langchain_results} | {
        (type(r.value), r.value) for r in ours_results
    }
    if len(values) != 1 or next(iter(values))[0] is not bool:
        raise Mismatch(
            f'{row.name} (ours: mode={row.ours_mode!r}, arguments={row.ours_args!r}): '
            f'LangChain {[r["score"] for r in langchain_results[:3]]}, ours {[r.value for r in ours_results[:3]]}\n'
            f'  ours reason: {str(ours_results[0].reason)[:500]}'
        )
    return bool(next(iter(values))[1])


def measure(row: Row, repeats: int) -> Measurement:
    """One untimed warm-up, then `repeats` timed repetitions on fresh copies; the side going first alternates."""
    langchain, ours = evaluators(row)
    count = CALLS_PER_REPETITION[row.pair.calls]
    result = Measurement(row, repeats)
    for repetition in range(-1, repeats):
        if repetition % 2 == 0:
            langchain_time, langchain_results = run_side(langchain, fresh(row.pair, count))
            ours_time, ours_results = run_side(ours, fresh(row.pair, count))
        else:
            ours_time, ours_results = run_side(ours, fresh(row.pair, count))
            langchain_time, langchain_results = run_side(langchain, fresh(row.pair, count))
        result.value = agreed(row, langchain_results, ours_results)
        if repetition >= 0:
            result.langchain_seconds.append(langchain_time)
            result.ours_seconds.append(ours_time)
    return result


def profile_ours(row: Row) -> str:
    """cProfile of ours on one fresh copy of the row's pair: our functions by cumulative time, then all by own time."""
    import cProfile
    import io
    import pstats

    _, ours = evaluators(row)
    ((outputs, reference),) = fresh(row.pair, 1)
    profiler = cProfile.Profile()
    profiler.runcall(ours, outputs, reference)
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats('cumulative').print_stats('agentic_evals', 20)  # where the time goes, outermost first
    stats.sort_stats('tottime').print_stats(10)  # and the functions that spend it
    return text.getvalue()


def reading_times(pair: Pair, repeats: int) -> tuple[float, float]:
    """Median seconds each side takes to read both conversations, before any comparing: LangChain's conversion
    to its OpenAI message dicts (what its evaluator does first), our `trajectory_from_messages` twice."""
    from agentevals.trajectory.utils import _normalize_to_openai_messages_list

    from agentic_evals import trajectory_from_messages

    def langchain(outputs: Any, reference: Any) -> Any:
        return _normalize_to_openai_messages_list(outputs), _normalize_to_openai_messages_list(reference)

    def ours(outputs: Any, reference: Any) -> Any:
        return trajectory_from_messages(outputs), trajectory_from_messages(reference)

    count = CALLS_PER_REPETITION[pair.calls]
    langchain_seconds = [run_side(langchain, fresh(pair, count))[0] for _ in range(repeats)]
    ours_seconds = [run_side(ours, fresh(pair, count))[0] for _ in range(repeats)]
    return statistics.median(langchain_seconds), statistics.median(ours_seconds)


# ---------------------------------------------------------------------------------------------
# Output and main
# ---------------------------------------------------------------------------------------------


def machine() -> list[str]:
    from importlib.metadata import version

    from .run import host  # in the venv only: it imports pydantic-evals and agentic_evals

    cpu, python = host()

    def git(*command: str) -> str:
        done = subprocess.run(['git', *command], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else '?'

    changed = git('status', '--porcelain', '--', 'agentic_evals')
    peers = ', '.join(f'{name} {version(name)}' for name in ('agentevals', 'openevals', 'langchain-core', 'langsmith'))
    return [
        cpu,
        f'{python}; {sys.prefix}',
        f'{peers}; agentic-evals-otel {version("agentic-evals-otel")} at {git("rev-parse", "--short", "HEAD")}'
        + (' (agentic_evals/ has uncommitted changes)' if changed else ''),
    ]


def results_table(measurements: list[Measurement]) -> str:
    from .run import milliseconds, ratio, table

    rows = [
        [
            f'{m.row.pair.calls:,}',
            m.row.pair.attempt,
            m.row.mode,
            m.row.args_mode,
            f'{m.row.ours_mode}, {m.row.ours_args}',
            str(m.value),
            str(m.repeats),
            milliseconds(statistics.median(m.langchain_seconds)),
            milliseconds(statistics.median(m.ours_seconds)),
            ratio(m.ratio),
            f'>= {TARGET:g}x {"met" if m.met else "NOT MET"}',
        ]
        for m in measurements
    ]
    header = ['calls', 'attempt', 'LangChain mode', 'args', 'ours (mode, arguments)', 'value', 'runs',
              'LangChain ms', 'ours ms', 'LangChain/ours (median)', 'target']  # fmt: skip
    return table(rows, header)


def run_in_venv(quick: bool, profile: bool) -> int:
    os.environ.update(QUIET)
    import agentic_evals

    if not Path(agentic_evals.__file__).resolve().is_relative_to(ROOT):
        sys.exit(f'agentic_evals comes from {agentic_evals.__file__}, not from {ROOT}')
    script = reference_script()
    rng = random.Random(SEED)
    pairs = [pair for size in SIZES for pair in plan_pairs(size, rng, script.conversation)]
    rows = [
        Row(pair, mode, args_mode, *script.OURS[mode, args_mode])
        for pair in pairs
        for mode in MODES
        for args_mode in ARGS_MODES
    ]
    print('LangChain agentevals trajectory match vs agentic_evals.tool_call_match: median wall time per evaluation,')
    print('each on fresh copies of the same OpenAI chat messages.')
    for line in machine():
        print(f'  {line}')
    if os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1):
        print('  Note: other processes are busy on this machine; expect noisy times (ratios are steadier).')
    for pair in pairs:
        outputs, reference = json.loads(pair.outputs), json.loads(pair.reference)
        print(
            f'  {pair.calls:,} calls, {pair.attempt}: {len(outputs)} output messages '
            f'({sum(len(m.get("tool_calls") or []) for m in outputs)} calls), {len(reference)} reference messages'
        )
    started = time.perf_counter()
    measurements: list[Measurement] = []
    try:
        for row in rows:
            repeats = max(3, round(REPEATS[row.pair.calls] * (0.25 if quick else 1)))
            measurements.append(measure(row, repeats))
            print(f'  measured: {row.name}', file=sys.stderr)
    except Mismatch as e:
        print(f'\nFAILED: LangChain and ours disagree.\n{e}', file=sys.stderr)
        return 1
    print(f'\n{results_table(measurements)}')
    from .run import milliseconds

    print('\nReading both conversations, before comparing anything (medians): LangChain ms, ours ms.')
    for pair in pairs:
        langchain_read, ours_read = reading_times(pair, max(3, round(REPEATS[pair.calls] * (0.25 if quick else 1))))
        print(f'  {pair.calls:,} calls, {pair.attempt}: {milliseconds(langchain_read)}; {milliseconds(ours_read)}')
    missed = [m for m in measurements if not m.met]
    print(f'\nTargets: {"all met" if not missed else "NOT MET: " + "; ".join(m.row.name for m in missed)}.')
    if profile:
        for m in missed:
            print(f'\ncProfile of ours, {m.row.name} (ours: {m.row.ours_mode}, {m.row.ours_args}):')
            print(profile_ours(m.row))
    print(f'Total benchmark time {time.perf_counter() - started:.0f} s.')
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.langchain_bench', description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='a quarter of the repetitions: a smoke test')
    parser.add_argument(
        '--venv', type=Path, default=DEFAULT_VENV, help=f'where agentevals lives (default {DEFAULT_VENV})'
    )
    parser.add_argument('--profile', action='store_true', help='cProfile ours on every row that misses the target')
    parser.add_argument('--in-venv', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.in_venv:
        return bootstrap(args.venv, list(sys.argv[1:] if argv is None else argv))
    return run_in_venv(args.quick, args.profile)


if __name__ == '__main__':
    sys.exit(main())
