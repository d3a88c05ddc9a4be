"""Compute ragas' own ToolCallAccuracy and ToolCallF1 on fixed cases; write tests/evaluators/data/ragas_reference.json.

The differential test (tests/evaluators/test_reference_calls.py) compares our metrics with this table, so ragas is
never a dependency of the project or its tests. Run with any Python 3.10+:

    python scripts/ragas_reference.py [--venv /tmp/ragas-venv]

It creates the venv if needed, installs ragas there, and re-runs itself with that interpreter. ragas
0.4.3 imports `langchain_community.chat_models.vertexai`, which langchain-community 0.4 removed, so
the LangChain packages are pinned below 0.4 / 1.0.

Two groups of cases:
- `well_defined`: generated with a fixed seed; flat scalar arguments, each argument of one type across
  all calls, no call repeated within a list, never both lists empty. ragas is right on these, so ours
  must give the same values.
- `defects`: hand-written inputs where ragas is wrong (see docs/ragas.md); the table records what
  ragas says, the test asserts what we say instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

RAGAS = 'ragas==0.4.3'
PINS = ['langchain-community<0.4', 'langchain<1', 'langchain-core<1', 'langchain-openai<1']
ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / 'tests' / 'evaluators' / 'data' / 'ragas_reference.json'
SEED = 20240604
CASES = 400

Call = dict[str, Any]

# Each tool's arguments and the values they draw from: one type per argument keeps ragas well defined.
TOOLS: dict[str, dict[str, list[Any]]] = {
    'search': {'query': ['otel', 'spans', 'a', 'a!', 'a b'], 'limit': [1, 5, 10, 50]},
    'fetch': {'url': ['https://a.example', 'https://b.example', 'https://a.example/x'], 'raw': [True, False]},
    'compute': {'a': [0, 2, -3, 12], 'b': [0.5, 2.25, -1.75]},
    'lookup': {'term': ['gen_ai', 'tool', 'Tool'], 'exact': [True, False], 'lang': [None]},
    'ping': {},
}


def _random_call(rng: random.Random) -> Call:
    name = rng.choice(sorted(TOOLS))
    params = TOOLS[name]
    keys = [k for k in sorted(params) if rng.random() < 0.75]
    return {'name': name, 'args': {k: rng.choice(params[k]) for k in keys}}


def _mutate(rng: random.Random, call: Call) -> Call:
    """A near miss: one argument changed, dropped or added."""
    params = TOOLS[call['name']]
    args = dict(call['args'])
    choice = rng.random()
    if args and choice < 0.4:
        key = rng.choice(sorted(args))
        args[key] = rng.choice(params[key])
    elif args and choice < 0.7:
        del args[rng.choice(sorted(args))]
    elif params:
        key = rng.choice(sorted(params))
        args[key] = rng.choice(params[key])
    return {'name': call['name'], 'args': args}


def _unique(calls: list[Call]) -> list[Call]:
    seen: set[str] = set()
    out: list[Call] = []
    for call in calls:
        key = json.dumps(call, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(call)
    return out


def generate(rng: random.Random, style: int) -> tuple[list[Call], list[Call]]:
    """`(actual, reference)`: a reference list and an agent's attempt at it.

    Style 0 only changes arguments (names stay aligned), style 1 also reorders calls, style 2 also adds
    and drops calls, so every branch of both metrics gets cases.
    """
    reference = _unique([_random_call(rng) for _ in range(rng.randint(0, 4))])
    actual = [dict(call) for call in reference]
    for _ in range(rng.randint(0, 3)):
        edit = rng.random()
        if actual and (edit < 0.5 or style == 0):
            i = rng.randrange(len(actual))
            actual[i] = _mutate(rng, actual[i])
        elif len(actual) > 1 and (edit < 0.75 or style == 1):
            i, j = rng.sample(range(len(actual)), 2)
            actual[i], actual[j] = actual[j], actual[i]
        elif actual and edit < 0.85:
            actual.pop(rng.randrange(len(actual)))
        else:
            actual.insert(rng.randint(0, len(actual)), _random_call(rng))
    actual = _unique(actual)
    if not actual and not reference:
        reference = [_random_call(rng)]
    return actual, reference


def conversation(actual: list[Call], rng: random.Random) -> list[dict[str, Any]]:
    """ragas-style messages: the calls spread over AI messages, each call answered by a tool message."""
    messages: list[dict[str, Any]] = [{'type': 'human', 'content': 'Do the task.'}]
    i = 0
    while i < len(actual):
        batch = actual[i : i + rng.randint(1, 2)]
        messages.append({'type': 'ai', 'content': '', 'tool_calls': batch})
        messages += [{'type': 'tool', 'content': f'{call["name"]} done'} for call in batch]
        i += len(batch)
    messages.append({'type': 'ai', 'content': 'Done.'})
    return messages


DEFECTS: list[dict[str, Any]] = [
    {
        'id': 'int-vs-string',
        'description': "ragas compares str() of values, so 1 equals '1' in ToolCallAccuracy",
        'actual': [{'name': 'search', 'args': {'limit': '1'}}],
        'reference': [{'name': 'search', 'args': {'limit': 1}}],
    },
    {
        'id': 'bool-vs-string',
        'description': "str(True) == 'True', so True equals 'True' in ToolCallAccuracy",
        'actual': [{'name': 'fetch', 'args': {'raw': 'True'}}],
        'reference': [{'name': 'fetch', 'args': {'raw': True}}],
    },
    {
        'id': 'none-vs-string',
        'description': "str(None) == 'None', so None equals 'None' in ToolCallAccuracy",
        'actual': [{'name': 'lookup', 'args': {'lang': 'None'}}],
        'reference': [{'name': 'lookup', 'args': {'lang': None}}],
    },
    {
        'id': 'nested-key-order',
        'description': 'str() of a dict depends on key order, so equal nested objects differ in ToolCallAccuracy',
        'actual': [{'name': 'search', 'args': {'filter': {'b': 2, 'a': 1}}}],
        'reference': [{'name': 'search', 'args': {'filter': {'a': 1, 'b': 2}}}],
    },
    {
        'id': 'int-vs-float',
        'description': 'ToolCallAccuracy: str(1) != str(1.0); ToolCallF1: 1 == 1.0. ragas disagrees with itself',
        'actual': [{'name': 'compute', 'args': {'a': 1.0}}],
        'reference': [{'name': 'compute', 'args': {'a': 1}}],
    },
    {
        'id': 'bool-vs-int',
        'description': 'ToolCallF1 compares with Python equality and hashing, where True == 1',
        'actual': [{'name': 'compute', 'args': {'a': True}}],
        'reference': [{'name': 'compute', 'args': {'a': 1}}],
    },
    {
        'id': 'duplicate-expected',
        'description': 'ToolCallF1 uses sets: a reference call expected twice is satisfied by one call',
        'actual': [{'name': 'search', 'args': {'query': 'otel'}}],
        'reference': [{'name': 'search', 'args': {'query': 'otel'}}, {'name': 'search', 'args': {'query': 'otel'}}],
    },
    {
        'id': 'duplicate-actual',
        'description': 'ToolCallF1 uses sets: a call repeated needlessly costs no precision',
        'actual': [{'name': 'search', 'args': {'query': 'otel'}}, {'name': 'search', 'args': {'query': 'otel'}}],
        'reference': [{'name': 'search', 'args': {'query': 'otel'}}],
    },
    {
        'id': 'duplicate-with-others',
        'description': 'ToolCallF1 uses sets: the repeat vanishes from precision and recall alike',
        'actual': [
            {'name': 'search', 'args': {'query': 'otel'}},
            {'name': 'search', 'args': {'query': 'otel'}},
            {'name': 'fetch', 'args': {'url': 'https://a.example'}},
        ],
        'reference': [{'name': 'search', 'args': {'query': 'otel'}}, {'name': 'ping', 'args': {}}],
    },
    {
        'id': 'both-empty',
        'description': 'no calls expected and none made: ToolCallF1 scores 0.0, ToolCallAccuracy 1.0',
        'actual': [],
        'reference': [],
    },
]


async def ragas_scores(messages: list[dict[str, Any]], reference: list[Call]) -> dict[str, float]:
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
    from ragas.metrics.collections import ToolCallAccuracy, ToolCallF1

    user_input: list[Any] = []
    for message in messages:
        if message['type'] == 'human':
            user_input.append(HumanMessage(content=message['content']))
        elif message['type'] == 'tool':
            user_input.append(ToolMessage(content=message['content']))
        else:
            calls = [ToolCall(name=c['name'], args=c['args']) for c in message.get('tool_calls', [])]
            user_input.append(AIMessage(content=message['content'], tool_calls=calls or None))
    ref = [ToolCall(name=c['name'], args=c['args']) for c in reference]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # ragas warns on length mismatches and empty lists
        strict = await ToolCallAccuracy().ascore(user_input=user_input, reference_tool_calls=ref)
        flexible = await ToolCallAccuracy(strict_order=False).ascore(user_input=user_input, reference_tool_calls=ref)
        f1 = await ToolCallF1().ascore(user_input=user_input, reference_tool_calls=ref)
    return {'accuracy_strict': strict.value, 'accuracy_flexible': flexible.value, 'f1': f1.value}


async def build_table() -> dict[str, Any]:
    from importlib.metadata import version

    rng = random.Random(SEED)
    well_defined: list[dict[str, Any]] = []
    for index in range(CASES):
        actual, reference = generate(rng, index % 3)
        messages = conversation(actual, rng)
        scores = await ragas_scores(messages, reference)
        well_defined.append(
            {'id': f'generated-{index:03d}', 'conversation': messages, 'reference': reference, 'ragas': scores}
        )
    defects: list[dict[str, Any]] = []
    for case in DEFECTS:
        messages = conversation(case['actual'], random.Random(0))
        scores = await ragas_scores(messages, case['reference'])
        defects.append({**case, 'conversation': messages, 'ragas': scores})
    return {
        'generated_by': 'scripts/ragas_reference.py',
        'ragas_version': version('ragas'),
        'seed': SEED,
        'well_defined': well_defined,
        'defects': defects,
    }


def dump(table: dict[str, Any]) -> str:
    """JSON with one case per line: small, and a regenerated table diffs case by case."""
    lines = ['{']
    for key, value in table.items():
        if isinstance(value, list):
            cases = ',\n'.join('  ' + json.dumps(case, ensure_ascii=False) for case in value)
            lines.append(f' {json.dumps(key)}: [\n{cases}\n ],')
        else:
            lines.append(f' {json.dumps(key)}: {json.dumps(value)},')
    lines[-1] = lines[-1].rstrip(',')
    return '\n'.join(lines) + '\n}\n'


def ensure_ragas(venv: Path) -> None:
    """Re-run this script inside `venv` (created and filled on first use) unless ragas is importable here."""
    try:
        import ragas  # noqa: F401
    except ImportError:
        pass
    else:
        return
    python = venv / 'bin' / 'python'
    if not python.exists():
        subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
    subprocess.run([str(python), '-m', 'pip', 'install', '-q', RAGAS, *PINS], check=True)
    env = {**os.environ, 'RAGAS_REFERENCE_CHILD': '1'}
    sys.exit(subprocess.run([str(python), __file__, *sys.argv[1:]], env=env).returncode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--venv', type=Path, default=Path('/tmp/ragas-venv'), help='where to install ragas')
    args = parser.parse_args()
    if not os.environ.get('RAGAS_REFERENCE_CHILD'):
        ensure_ragas(args.venv)
    table = asyncio.run(build_table())
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(dump(table), encoding='utf-8')
    print(f'{len(table["well_defined"])} well-defined and {len(table["defects"])} defect cases -> {OUTPUT}')


if __name__ == '__main__':
    main()
