"""LangChain agentevals' trajectory match on fixed conversations -> tests/evaluators/data/langchain_reference.json.

The differential test (tests/evaluators/test_langchain_differential.py) compares our `tool_call_match` with this
table, so neither agentevals nor DeepEval is ever a dependency of the project or its tests. Run with any Python 3.10+:

    python scripts/langchain_reference.py [--venv /tmp/agentevals-venv] [--deepeval-venv /tmp/deepeval-venv]

The generation, the brute-force oracle and the writing of the table run in this interpreter. The scores come from
two children, each this same script run inside its own venv (created and filled on first use): one with agentevals
(`create_trajectory_match_evaluator`), one with DeepEval (`ToolCorrectnessMetric`, given a model that raises if it
is ever asked anything: no LLM and no network is used). The cases go to a child on stdin, its scores come back on
stdout.

What the table holds:
- `generated`: conversations in OpenAI chat format made with a fixed seed (a reference, and an agent's attempt at it
  after a few realistic perturbations), each scored by LangChain in all four trajectory modes times all four argument
  modes. `oracle` is what a valid pairing decides, found by trying every pairing, under our semantics with the
  arguments mapped as docs/langchain.md says. The script checks that this equals LangChain's own definition of each
  mode evaluated with the best pairing instead of the first one; `greedy_wrong_in` lists the modes where LangChain's
  greedy pairing gives another answer (`greedy_wrong` is true when there is any). `roles_align` says whether both
  conversations have the same message roles in the same order (LangChain's strict mode compares them; ours does not).
  Argument values are flat JSON scalars or lists of strings, with one type per argument, where Python's `==`
  (LangChain's comparison) and canonical JSON (ours) agree.
- `cases`: hand-written conversations (the issue's example, its mirror, messages that only LangChain's strict mode
  compares, `True` against `1`, `tool_args_match_overrides`), recorded the same way.
- `deepeval`: hand-written calls where DeepEval's ToolCorrectnessMetric pairs calls wrongly, with its score and the
  score the best pairing would give under its own formula.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

AGENTEVALS = ['agentevals==0.0.9', 'openevals==0.2.2', 'langchain-core==1.8.3', 'langsmith==0.15.1']
DEEPEVAL = ['deepeval==4.3.1']
ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / 'tests' / 'evaluators' / 'data' / 'langchain_reference.json'
SEED = 20250611
CASES = 320

TRAJECTORY_MODES = ['strict', 'unordered', 'subset', 'superset']
ARGS_MODES = ['exact', 'ignore', 'subset', 'superset']

Call = dict[str, Any]  # {'name': ..., 'args': {...}}
Message = dict[str, Any]

# -- generation --------------------------------------------------------------------------------------------------

# Each tool's required and optional arguments with the values they draw from (one JSON type per argument).
TOOLS: dict[str, tuple[dict[str, list[Any]], dict[str, list[Any]]]] = {
    'search': ({'query': ['otel spans', 'gen_ai tool', 'agentevals']}, {'limit': [5, 10, 20], 'lang': ['en', 'de']}),
    'fetch': ({'url': ['https://docs.example/a', 'https://docs.example/b']}, {'timeout': [10, 30]}),
    'weather': ({'city': ['Paris', 'Lima', 'Oslo']}, {'units': ['metric', 'imperial'], 'days': [1, 3]}),
    'send_email': (
        {'to': ['ana@example.com', 'bo@example.com'], 'subject': ['Report', 'Weather']},
        {'cc': [['cy@example.com'], [], ['cy@example.com', 'di@example.com']]},
    ),
    'get_time': ({}, {'tz': ['UTC', 'Europe/Paris']}),
}


def _params(name: str) -> dict[str, list[Any]]:
    required, optional = TOOLS[name]
    return {**required, **optional}


def random_call(rng: random.Random) -> Call:
    name = rng.choice(sorted(TOOLS))
    required, optional = TOOLS[name]
    args = {key: rng.choice(values) for key, values in required.items()}
    args.update({key: rng.choice(values) for key, values in optional.items() if rng.random() < 0.4})
    return {'name': name, 'args': args}


def variant(rng: random.Random, call: Call) -> Call:
    """The same tool again with one argument more, one fewer, or one value changed: a refinement or a retry."""
    params = _params(call['name'])
    args = dict(call['args'])
    missing = [key for key in params if key not in args]
    choice = rng.random()
    if missing and (choice < 0.5 or not args):
        key = rng.choice(missing)
        args[key] = rng.choice(params[key])
    elif args and choice < 0.8:
        del args[rng.choice(sorted(args))]
    elif args:
        key = rng.choice(sorted(args))
        others = [value for value in params[key] if value != args[key]]
        if others:
            args[key] = rng.choice(others)
    return {'name': call['name'], 'args': args}


def reference_steps(rng: random.Random) -> list[list[Call]]:
    """The model responses that call tools: 1 to 3 of them, 1 to 3 calls each, often the same tool twice."""
    responses: list[list[Call]] = []
    made: list[Call] = []
    for _ in range(rng.randint(1, 3)):
        response: list[Call] = []
        for _ in range(rng.choice([1, 1, 2, 2, 3])):
            call = variant(rng, rng.choice(made)) if made and rng.random() < 0.45 else random_call(rng)
            response.append(call)
            made.append(call)
        responses.append(response)
    return responses


def _positions(responses: list[list[Call]]) -> list[tuple[int, int]]:
    return [(r, c) for r, response in enumerate(responses) for c in range(len(response))]


def perturb(rng: random.Random, responses: list[list[Call]], extras: dict[str, Any]) -> str | None:
    """Apply one perturbation in place; returns its name, or None when it does not apply."""
    op = rng.choices(
        [
            'drop', 'add', 'add_variant', 'duplicate', 'swap', 'reverse_response', 'change_arg', 'add_arg',
            'remove_arg', 'split_response', 'merge_responses', 'extra_user', 'system_prompt',
        ],
        weights=[10, 6, 12, 5, 14, 8, 8, 9, 9, 6, 6, 3, 2],
    )[0]  # fmt: skip
    spots = _positions(responses)
    if op == 'drop' and spots:
        r, c = rng.choice(spots)
        del responses[r][c]
        if not responses[r]:
            del responses[r]
    elif op == 'add':
        call = random_call(rng)
        if responses and rng.random() < 0.6:
            response = rng.choice(responses)
            response.insert(rng.randint(0, len(response)), call)
        else:
            responses.insert(rng.randint(0, len(responses)), [call])
    elif op in ('add_variant', 'duplicate') and spots:
        r, c = rng.choice(spots)
        call = responses[r][c]
        copy = variant(rng, call) if op == 'add_variant' else {'name': call['name'], 'args': dict(call['args'])}
        if rng.random() < 0.7:
            responses[r].insert(rng.randint(0, len(responses[r])), copy)
        else:
            responses.insert(rng.randint(0, len(responses)), [copy])
    elif op == 'swap' and len(spots) > 1:
        (r1, c1), (r2, c2) = rng.sample(spots, 2)
        responses[r1][c1], responses[r2][c2] = responses[r2][c2], responses[r1][c1]
    elif op == 'reverse_response' and any(len(response) > 1 for response in responses):
        rng.choice([response for response in responses if len(response) > 1]).reverse()
    elif op in ('change_arg', 'add_arg', 'remove_arg') and spots:
        r, c = rng.choice(spots)
        call = responses[r][c]
        params, args = _params(call['name']), dict(call['args'])
        if op == 'change_arg' and args:
            key = rng.choice(sorted(args))
            others = [value for value in params[key] if value != args[key]]
            if not others:
                return None
            args[key] = rng.choice(others)
        elif op == 'add_arg' and len(args) < len(params):
            key = rng.choice([key for key in params if key not in args])
            args[key] = rng.choice(params[key])
        elif op == 'remove_arg' and args:
            del args[rng.choice(sorted(args))]
        else:
            return None
        responses[r][c] = {'name': call['name'], 'args': args}
    elif op == 'split_response' and any(len(response) > 1 for response in responses):
        r = rng.choice([r for r, response in enumerate(responses) if len(response) > 1])
        cut = rng.randint(1, len(responses[r]) - 1)
        responses[r : r + 1] = [responses[r][:cut], responses[r][cut:]]
    elif op == 'merge_responses' and len(responses) > 1:
        r = rng.randrange(len(responses) - 1)
        responses[r : r + 2] = [responses[r] + responses[r + 1]]
    elif op == 'extra_user' and len(responses) > 1:
        extras['user_before'] = rng.randint(1, len(responses) - 1)
    elif op == 'system_prompt' and not extras.get('system'):
        extras['system'] = True
    else:
        return None
    return op


def conversation(responses: list[list[Call]], extras: dict[str, Any] | None = None) -> list[Message]:
    """OpenAI chat messages: the task, each response's calls answered by tool messages, a final answer."""
    extras = extras or {}
    messages: list[Message] = []
    if extras.get('system'):
        messages.append({'role': 'system', 'content': 'You are a helpful assistant.'})
    messages.append({'role': 'user', 'content': 'Do the task.'})
    count = 0
    for index, response in enumerate(responses):
        if extras.get('user_before') == index:
            messages.append({'role': 'user', 'content': 'Go on.'})
        calls = []
        for call in response:
            count += 1
            arguments = json.dumps(call['args'], ensure_ascii=False)
            function = {'name': call['name'], 'arguments': arguments}
            calls.append({'id': f'c{count}', 'type': 'function', 'function': function})
        messages.append({'role': 'assistant', 'content': None, 'tool_calls': calls})
        messages += [{'role': 'tool', 'tool_call_id': call['id'], 'content': 'ok'} for call in calls]
    messages.append({'role': 'assistant', 'content': 'Done.'})
    return messages


def generate(rng: random.Random) -> tuple[list[Message], list[Message], list[str]]:
    """`(outputs, reference, perturbations)`."""
    reference = reference_steps(rng)
    actual = [[{'name': call['name'], 'args': dict(call['args'])} for call in response] for response in reference]
    extras: dict[str, Any] = {}
    applied: list[str] = []
    for _ in range(rng.choice([0, 1, 1, 2, 2, 2, 3])):
        for _attempt in range(5):
            op = perturb(rng, actual, extras)
            if op is not None:
                applied.append(op)
                break
    return conversation(actual, extras), conversation(reference), applied


# -- the oracle: every pairing tried -------------------------------------------------------------------------------

# Callable overrides, by name (the table is JSON). The test defines the same two functions.
CALLABLES: dict[str, Callable[[dict[str, Any], dict[str, Any]], bool]] = {
    'same_query_any_case': lambda first, second: (
        str(first.get('query', '')).lower() == str(second.get('query', '')).lower()
    ),
    'limit_at_least': lambda first, second: first.get('limit', 0) >= second.get('limit', 0),
}


def responses_of(messages: list[Message]) -> list[list[Call] | None]:
    """Each assistant message's calls, None for one without calls (as LangChain reads them)."""
    out: list[list[Call] | None] = []
    for message in messages:
        if message['role'] == 'assistant':
            calls = message.get('tool_calls') or None
            out.append(
                None
                if calls is None
                else [{'name': c['function']['name'], 'args': json.loads(c['function']['arguments'])} for c in calls]
            )
    return out


def calls_of(messages: list[Message]) -> list[Call]:
    return [call for response in responses_of(messages) for call in response or []]


def injection_exists(sources: list[Call], targets: list[Call], ok: Callable[[Call, Call], bool]) -> bool:
    """Whether every source can be given a distinct target with `ok(source, target)`, trying every assignment."""
    if len(sources) > len(targets):
        return False
    return any(
        all(ok(source, targets[t]) for source, t in zip(sources, chosen, strict=True))
        for chosen in itertools.permutations(range(len(targets)), len(sources))
    )


def args_relation(mode: Any) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
    """A relation `(first, second) -> bool` on argument dicts.

    `mode` is an argument mode, a list of keys that must be equal (a missing key reads as None, as in LangChain; the
    cases give every listed key a value), or `{'callable': name}`, optionally with `'swapped': true`.
    """
    if isinstance(mode, list):
        return lambda first, second: all(first.get(key) == second.get(key) for key in mode)
    if isinstance(mode, dict):
        function = CALLABLES[mode['callable']]
        return (lambda first, second: function(second, first)) if mode.get('swapped') else function
    return {
        'exact': lambda first, second: first == second,
        'ignore': lambda first, second: True,
        'subset': lambda first, second: all(k in second and second[k] == v for k, v in first.items()),
        'superset': lambda first, second: all(k in first and first[k] == v for k, v in second.items()),
    }[mode]


def calls_relation(args_mode: str, overrides: dict[str, Any] | None) -> Callable[[Call, Call], bool]:
    """`(first, second)`: same tool, and the tool's argument relation holds for (first's, second's) arguments."""

    def related(first: Call, second: Call) -> bool:
        mode = overrides[first['name']] if overrides and first['name'] in overrides else args_mode
        return first['name'] == second['name'] and args_relation(mode)(first['args'], second['args'])

    return related


def langchain_optimal(
    mode: str, args_mode: str, outputs: list[Message], reference: list[Message], overrides: dict[str, Any] | None
) -> bool:
    """LangChain's definition of each mode, read from its source, with the best pairing instead of the first.

    `matcher(a, b)` is called as LangChain calls it: (output, reference) in strict and superset mode, (reference,
    output) in subset mode, both ways round in unordered mode.
    """
    match = calls_relation(args_mode, overrides)
    if mode == 'strict':
        if [m['role'] for m in outputs] != [m['role'] for m in reference]:
            return False
        for out, ref in zip(responses_of(outputs), responses_of(reference), strict=True):
            if (out is None) != (ref is None):
                return False
            if out is not None and ref is not None and (len(out) != len(ref) or not injection_exists(out, ref, match)):
                return False
        return True
    out_calls, ref_calls = calls_of(outputs), calls_of(reference)
    superset = injection_exists(ref_calls, out_calls, lambda ref, out: match(out, ref))
    subset = injection_exists(out_calls, ref_calls, lambda out, ref: match(ref, out))
    return {'superset': superset, 'subset': subset, 'unordered': superset and subset}[mode]


# Our mode and argument mode for each of LangChain's (see docs/langchain.md): the argument matcher swapped in subset
# mode, and in unordered mode (both directions) subset or superset arguments leave only equal arguments.
SAME = {a: a for a in ARGS_MODES}
SWAP = {'exact': 'exact', 'ignore': 'ignore', 'subset': 'superset', 'superset': 'subset'}
BOTH_WAYS = {'exact': 'exact', 'ignore': 'ignore', 'subset': 'exact', 'superset': 'exact'}
OURS: dict[tuple[str, str], tuple[str, str]] = {
    **{('strict', a): ('strict', a) for a in ARGS_MODES},
    **{('superset', a): ('superset', a) for a in ARGS_MODES},
    **{('subset', a): ('subset', SWAP[a]) for a in ARGS_MODES},
    **{('unordered', a): ('unordered', BOTH_WAYS[a]) for a in ARGS_MODES},
}
SYMMETRIC = {'same_query_any_case'}


def our_overrides(mode: str, overrides: dict[str, Any] | None) -> dict[str, Any] | None:
    """LangChain's overrides as our per-tool argument rules for `mode`; KeyError when one has no equivalent.

    A key list compares equality, the same either way round. A mode name maps like the global mode. A callable is
    called (output, reference) in strict and superset mode, (reference, output) in subset mode, and both ways in
    unordered mode, where only a symmetric callable has an equivalent (one pairing, as for any symmetric relation).
    """
    if not overrides:
        return None
    mapped: dict[str, Any] = {}
    for tool, rule in overrides.items():
        if isinstance(rule, str):
            rule = {'subset': SWAP, 'unordered': BOTH_WAYS}.get(mode, SAME)[rule]
        elif isinstance(rule, dict):
            if mode == 'subset':
                rule = {**rule, 'swapped': True}
            elif mode == 'unordered' and rule['callable'] not in SYMMETRIC:
                raise KeyError(rule['callable'])
        mapped[tool] = rule
    return mapped


def ours_oracle(
    mode: str, args_mode: str, outputs: list[Message], reference: list[Message], rules: dict[str, Any] | None = None
) -> bool:
    """Our semantics, right way round: `ok(actual, expected)`; strict compares model responses, nothing else."""
    ok = calls_relation(args_mode, rules)
    if mode == 'strict':
        out, ref = responses_of(outputs), responses_of(reference)
        return len(out) == len(ref) and all(
            len(o or []) == len(r or []) and injection_exists(o or [], r or [], ok)
            for o, r in zip(out, ref, strict=True)
        )
    actual, expected = calls_of(outputs), calls_of(reference)
    if mode == 'unordered':
        return len(actual) == len(expected) and injection_exists(actual, expected, ok)
    if mode == 'subset':
        return injection_exists(actual, expected, ok)
    return injection_exists(expected, actual, lambda e, a: ok(a, e))  # superset


def record(row: dict[str, Any], scores: dict[str, list[bool]]) -> dict[str, Any]:
    """Add LangChain's scores, the oracle and the greedy flags to a row, checking the mapping on the way.

    `oracle` is our semantics with the mapped arguments (null where no mapping is equivalent).
    """
    outputs, reference, overrides = row['outputs'], row['reference'], row.get('overrides')
    roles_align = [m['role'] for m in outputs] == [m['role'] for m in reference]
    oracle: dict[str, list[bool | None]] = {}
    greedy_wrong_in: list[str] = []
    for mode in TRAJECTORY_MODES:
        oracle[mode] = []
        for index, args_mode in enumerate(ARGS_MODES):
            optimal = langchain_optimal(mode, args_mode, outputs, reference, overrides)
            if scores[mode][index] != optimal:
                greedy_wrong_in.append(f'{mode}/{args_mode}')
            try:
                rules = our_overrides(mode, overrides)
            except KeyError:
                oracle[mode].append(None)
                continue
            ours = ours_oracle(*OURS[mode, args_mode], outputs, reference, rules)
            # The mapping holds on this row: LangChain's definition, best pairing, equals ours (strict: roles too).
            assert optimal == (ours and roles_align if mode == 'strict' else ours), (row['id'], mode, args_mode)
            oracle[mode].append(ours)
    return {
        **row,
        'roles_align': roles_align,
        'langchain': scores,
        'oracle': oracle,
        'greedy_wrong': bool(greedy_wrong_in),
        'greedy_wrong_in': greedy_wrong_in,
    }


# -- hand-written cases --------------------------------------------------------------------------------------------


def _one_response(*calls: Call) -> list[Message]:
    return conversation([list(calls)])


A_X = {'name': 'a', 'args': {'x': 1}}
A_XY = {'name': 'a', 'args': {'x': 1, 'y': 2}}
SEARCH = {'name': 'search', 'args': {'query': 'otel spans', 'limit': 5}}
FETCH = {'name': 'fetch', 'args': {'url': 'https://docs.example/a'}}

CASES_BY_HAND: list[dict[str, Any]] = [
    {
        'id': 'issue-superset-args',
        'description': 'reference [a(x=1), a(x=1, y=2)], actual [a(x=1, y=2), a(x=1)]: superset mode with superset '
        'arguments pairs a(x=1) with the first call and has nothing left for a(x=1, y=2)',
        'outputs': _one_response(A_XY, A_X),
        'reference': _one_response(A_X, A_XY),
    },
    {
        'id': 'issue-mirrored',
        'description': 'the same calls with actual and reference swapped: now subset mode with superset arguments '
        '(our subset arguments) and strict mode with subset arguments pair greedily into a dead end',
        'outputs': _one_response(A_X, A_XY),
        'reference': _one_response(A_XY, A_X),
    },
    {
        'id': 'extra-argument',
        'description': 'the agent added an argument: subset mode with subset arguments accepts it (the matcher is '
        'called (reference, output)), unordered mode with superset arguments rejects it (it is called both ways)',
        'outputs': _one_response(SEARCH),
        'reference': _one_response({'name': 'search', 'args': {'query': 'otel spans'}}),
    },
    {
        'id': 'follow-up-user-message',
        'description': 'the same calls, but the user spoke again between two responses: only strict mode differs, '
        'because LangChain compares every message role',
        'outputs': conversation([[SEARCH], [FETCH]], {'user_before': 1}),
        'reference': conversation([[SEARCH], [FETCH]]),
    },
    {
        'id': 'system-prompt',
        'description': 'the same calls, the reference starts with a system message: LangChain strict counts it',
        'outputs': conversation([[SEARCH, FETCH]]),
        'reference': conversation([[SEARCH, FETCH]], {'system': True}),
    },
    {
        'id': 'bool-vs-int',
        'description': 'LangChain compares arguments with Python ==, where True == 1; ours compares JSON, where they '
        'differ (the generated rows never mix the two). The oracle follows Python, as LangChain does',
        'outputs': _one_response({'name': 'fetch', 'args': {'url': 'https://docs.example/a', 'raw': 1}}),
        'reference': _one_response({'name': 'fetch', 'args': {'url': 'https://docs.example/a', 'raw': True}}),
        'values': 'python-equality',
    },
    {
        'id': 'override-keys',
        'description': "tool_args_match_overrides={'search': ['query']}: only the query must be equal",
        'outputs': _one_response({'name': 'search', 'args': {'query': 'otel spans', 'limit': 10}}, FETCH),
        'reference': _one_response(SEARCH, FETCH),
        'overrides': {'search': ['query']},
    },
    {
        'id': 'override-mode',
        'description': "tool_args_match_overrides={'search': 'superset'}: extra search arguments are fine, "
        'fetch keeps the global mode',
        'outputs': _one_response(SEARCH, {'name': 'fetch', 'args': {'url': 'https://docs.example/a', 'timeout': 10}}),
        'reference': _one_response({'name': 'search', 'args': {'query': 'otel spans'}}, FETCH),
        'overrides': {'search': 'superset'},
    },
    {
        'id': 'override-callable-symmetric',
        'description': 'a callable override, the same either way round: queries equal ignoring case',
        'outputs': _one_response({'name': 'search', 'args': {'query': 'OTel Spans', 'limit': 5}}),
        'reference': _one_response(SEARCH),
        'overrides': {'search': {'callable': 'same_query_any_case'}},
    },
    {
        'id': 'override-callable-asymmetric',
        'description': 'a callable override that is not symmetric (limit at least the reference one): subset mode '
        'calls it with (reference, output), so it tests the opposite',
        'outputs': _one_response({'name': 'search', 'args': {'query': 'otel spans', 'limit': 20}}),
        'reference': _one_response(SEARCH),
        'overrides': {'search': {'callable': 'limit_at_least'}},
    },
]


DEEPEVAL_CASES: list[dict[str, Any]] = [
    {
        'id': 'duplicate-calls',
        'description': 'the same call expected twice and made twice: DeepEval keeps matched calls in a set, and the '
        'second call equals the first, so it is skipped as already matched',
        'config': {'evaluation_params': ['input_parameters']},
        'called': [SEARCH, SEARCH],
        'expected': [SEARCH, SEARCH],
    },
    {
        'id': 'duplicate-calls-names-only',
        'description': 'names only (no evaluation_params): two identical calls still collide in the set',
        'config': {'evaluation_params': []},
        'called': [SEARCH, SEARCH],
        'expected': [{'name': 'search', 'args': {'query': 'a'}}, {'name': 'search', 'args': {'query': 'b'}}],
    },
    {
        'id': 'duplicate-calls-ordering',
        'description': 'with should_consider_ordering the weighted LCS pairs by position, not through the set: correct',
        'config': {'evaluation_params': ['input_parameters'], 'should_consider_ordering': True},
        'called': [SEARCH, SEARCH],
        'expected': [SEARCH, SEARCH],
    },
    {
        'id': 'greedy-partial-credit',
        'description': 'each expected call takes the best call still free: a(x=1) takes a(x=1, y=2) for half a '
        'point, leaving a(x=1, y=2) nothing; the best pairing scores 0.5 and passes the default threshold',
        'config': {'evaluation_params': ['input_parameters']},
        'called': [A_XY, {'name': 'a', 'args': {'x': 9}}],
        'expected': [A_X, A_XY],
    },
    {
        'id': 'greedy-tie',
        'description': 'a tie is broken by the first call, which the next expected call matches in full',
        'config': {'evaluation_params': ['input_parameters']},
        'called': [{'name': 'a', 'args': {'x': 1, 'y': 2}}, {'name': 'a', 'args': {'x': 1, 'y': 3}}],
        'expected': [{'name': 'a', 'args': {'x': 1, 'y': 1}}, {'name': 'a', 'args': {'x': 1, 'y': 2}}],
    },
]


def deepeval_compare_dicts(first: dict[str, Any], second: dict[str, Any]) -> float:
    """DeepEval's argument score, re-implemented (ToolCorrectnessMetric._compare_dicts, without exact match)."""
    if first == second:
        return 1.0
    keys = set(first) | set(second)
    score = 0.0
    for key in set(first) & set(second):
        if first[key] == second[key]:
            score += 1 / len(keys)
        elif isinstance(first[key], dict) and isinstance(second[key], dict):
            score += deepeval_compare_dicts(first[key], second[key]) / len(keys)
    return score


def deepeval_best_pairing(case: dict[str, Any]) -> float:
    """DeepEval's unordered score with the best one-to-one pairing instead of its greedy one."""
    called, expected = case['called'], case['expected']
    with_args = 'input_parameters' in case['config']['evaluation_params']

    def pair_score(e: Call, c: Call) -> float:
        if e['name'] != c['name']:
            return 0.0
        return deepeval_compare_dicts(e['args'], c['args']) if with_args else 1.0

    if not expected:
        return 1.0 if not called else 0.0
    size = max(len(called), len(expected))
    padded = called + [None] * (size - len(called))
    best = max(
        sum(pair_score(e, c) for e, c in zip(expected, chosen, strict=True) if c is not None)
        for chosen in itertools.permutations(padded, len(expected))
    )
    return best / len(expected)


# -- the children: the same script inside the peers' venvs ---------------------------------------------------------


def langchain_child(cases: list[dict[str, Any]]) -> list[dict[str, list[bool]]]:
    from agentevals.trajectory.match import create_trajectory_match_evaluator

    results = []
    for case in cases:
        overrides = case.get('overrides')
        if overrides:
            overrides = {k: CALLABLES[v['callable']] if isinstance(v, dict) else v for k, v in overrides.items()}
        scores: dict[str, list[bool]] = {}
        for mode in TRAJECTORY_MODES:
            scores[mode] = []
            for args_mode in ARGS_MODES:
                evaluator = create_trajectory_match_evaluator(
                    trajectory_match_mode=mode, tool_args_match_mode=args_mode, tool_args_match_overrides=overrides
                )
                # LangChain normalises the messages in place; give it copies.
                result = evaluator(
                    outputs=json.loads(json.dumps(case['outputs'])),
                    reference_outputs=json.loads(json.dumps(case['reference'])),
                )
                assert isinstance(result['score'], bool), result
                scores[mode].append(result['score'])
        results.append(scores)
    return results


def deepeval_child(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from deepeval.metrics import ToolCorrectnessMetric
    from deepeval.models import DeepEvalBaseLLM
    from deepeval.test_case import LLMTestCase, ToolCall, ToolCallParams

    class NoModel(DeepEvalBaseLLM):  # ToolCorrectnessMetric needs a model object; without available_tools it never asks
        def load_model(self) -> NoModel:
            return self

        def generate(self, *args: Any, **kwargs: Any) -> str:
            raise AssertionError('ToolCorrectnessMetric asked a model')

        async def a_generate(self, *args: Any, **kwargs: Any) -> str:
            raise AssertionError('ToolCorrectnessMetric asked a model')

        def get_model_name(self) -> str:
            return 'no model'

    params = {'input_parameters': ToolCallParams.INPUT_PARAMETERS}
    results = []
    for case in cases:
        config = dict(case['config'])
        config['evaluation_params'] = [params[p] for p in config['evaluation_params']]
        metric = ToolCorrectnessMetric(model=NoModel(), async_mode=False, **config)
        test_case = LLMTestCase(
            input='Do the task.',
            actual_output='Done.',
            tools_called=[ToolCall(name=c['name'], input_parameters=c['args']) for c in case['called']],
            expected_tools=[ToolCall(name=c['name'], input_parameters=c['args']) for c in case['expected']],
        )
        score = metric.measure(test_case, _show_indicator=False)
        results.append({'score': score, 'success': metric.is_successful(), 'threshold': metric.threshold})
    return results


def run_child(kind: str, venv: Path, pins: list[str], cases: list[dict[str, Any]]) -> tuple[str, list[Any]]:
    """Install `pins` in `venv` (created if needed), run this script there on `cases`; (version, results)."""
    python = venv / 'bin' / 'python'
    if not python.exists():
        subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True)
    subprocess.run([str(python), '-m', 'pip', 'install', '-q', *pins], check=True)
    quiet = {'LANGSMITH_TRACING': 'false', 'LANGCHAIN_TRACING_V2': 'false', 'DEEPEVAL_TELEMETRY_OPT_OUT': '1'}
    env = {**os.environ, **quiet}  # no tracing to LangSmith, no telemetry
    with tempfile.TemporaryDirectory() as cwd:  # DeepEval writes a .deepeval folder into the working directory
        done = subprocess.run(
            [str(python), str(Path(__file__).resolve()), '--child', kind],
            input=json.dumps(cases),
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
        )
    if done.returncode:
        sys.exit(f'{kind} child failed:\n{done.stderr}')
    answer = json.loads(done.stdout)
    return answer['version'], answer['results']


def child_main(kind: str) -> None:
    from importlib.metadata import version

    cases = json.loads(sys.stdin.read())
    if kind == 'langchain':
        results: list[Any] = langchain_child(cases)
        versions = {name: version(name) for name in ('agentevals', 'openevals', 'langchain-core')}
    else:
        results = deepeval_child(cases)
        versions = {'deepeval': version('deepeval')}
    json.dump({'version': versions, 'results': results}, sys.stdout)


# -- the table ---------------------------------------------------------------------------------------------------


def build_table(venv: Path, deepeval_venv: Path) -> dict[str, Any]:
    rng = random.Random(SEED)
    generated = []
    for index in range(CASES):
        outputs, reference, perturbations = generate(rng)
        generated.append(
            {'id': f'generated-{index:03d}', 'perturbations': perturbations, 'outputs': outputs, 'reference': reference}
        )
    langchain_versions, scores = run_child('langchain', venv, AGENTEVALS, generated + CASES_BY_HAND)
    rows = [record(row, score) for row, score in zip(generated + CASES_BY_HAND, scores, strict=True)]
    deepeval_version, deepeval_scores = run_child('deepeval', deepeval_venv, DEEPEVAL, DEEPEVAL_CASES)
    deepeval = [
        {**case, 'deepeval': score, 'best_pairing_score': deepeval_best_pairing(case)}
        for case, score in zip(DEEPEVAL_CASES, deepeval_scores, strict=True)
    ]
    return {
        'generated_by': 'scripts/langchain_reference.py',
        'versions': {**langchain_versions, **deepeval_version},
        'seed': SEED,
        'trajectory_modes': TRAJECTORY_MODES,
        'args_modes': ARGS_MODES,
        'generated': rows[:CASES],
        'cases': rows[CASES:],
        'deepeval': deepeval,
    }


def dump(table: dict[str, Any]) -> str:
    """JSON with one case per line: small, and a regenerated table diffs case by case."""
    lines = ['{']
    for key, value in table.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            cases = ',\n'.join('  ' + json.dumps(case, ensure_ascii=False, separators=(',', ':')) for case in value)
            lines.append(f' {json.dumps(key)}: [\n{cases}\n ],')
        else:
            lines.append(f' {json.dumps(key)}: {json.dumps(value)},')
    lines[-1] = lines[-1].rstrip(',')
    return '\n'.join(lines) + '\n}\n'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--venv', type=Path, default=Path('/tmp/agentevals-venv'), help='where to install agentevals')
    parser.add_argument(
        '--deepeval-venv', type=Path, default=Path('/tmp/deepeval-venv'), help='where to install DeepEval'
    )
    parser.add_argument('--child', choices=['langchain', 'deepeval'], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(args.child)
        return
    table = build_table(args.venv, args.deepeval_venv)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(dump(table), encoding='utf-8')
    wrong = sum(row['greedy_wrong'] for row in table['generated'])
    print(
        f'{len(table["generated"])} generated rows ({wrong} where greedy pairing is wrong), '
        f'{len(table["cases"])} hand-written, {len(table["deepeval"])} DeepEval cases -> {OUTPUT}'
    )


if __name__ == '__main__':
    main()
