"""tool_call_match against LangChain agentevals: the same answers where LangChain pairs calls right, the best pairing where not.

`tests/evaluators/data/langchain_reference.json` holds agentevals' own results, computed by
`scripts/langchain_reference.py` in a separate environment (agentevals is not a dependency), for every conversation
pair in all four trajectory modes times all four `tool_args_match_mode`s, and the oracle: whether a valid pairing
exists, found by trying every pairing.

LangChain's modes map to ours as follows (read from agentevals 0.0.9, `python/agentevals/trajectory/`):

- `strict`: the same argument mode. Its `_scorer` calls `matcher(output_args, reference_args)`, the right way
  round. It also compares the role of every message and their number (`len(outputs) != len(reference_outputs)`),
  where ours compares model responses only: the value is compared with LangChain's only where the roles line up
  (`roles_align`), else with the oracle.
- `superset`: the same argument mode; `_is_trajectory_superset(outputs, reference_outputs, ...)` calls
  `matcher(out_args, ref_args)`.
- `subset`: `_is_trajectory_superset(reference_outputs, outputs, ...)`, so the matcher is called
  `(reference_args, output_args)`: LangChain's `subset` arguments are our `superset` and the other way round;
  `exact` and `ignore` are the same either way.
- `unordered`: both of the above, so with `subset` (or `superset`) arguments every reference call needs an output
  call that is a subset of it and every output call a reference call that is a subset of it. With the best pairings
  that leaves only equal arguments (compose the two one-to-one pairings: a permutation whose every step goes to a
  subset returns to where it started, so every step is an equality): our `unordered` with `exact` arguments.
- `tool_args_match_overrides` map the same way to `tool_arguments`: a mode name like the global mode, a key list as
  it is (equality on the keys, the same either way round), a callable as it is in strict and superset mode and
  swapped in subset mode. In unordered mode LangChain calls a callable both ways round; only a symmetric callable has
  an equivalent (one pairing, as for any symmetric relation), so an asymmetric callable in unordered mode is left
  out (its oracle is null in the table).

Every combination of mode and argument mode has an equivalent, so none is left out of the generated rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentic_evals import tool_call_match

TABLE = json.loads((Path(__file__).parent / 'data' / 'langchain_reference.json').read_text(encoding='utf-8'))
MODES: list[str] = TABLE['trajectory_modes']
ARGS: list[str] = TABLE['args_modes']
GENERATED: list[dict[str, Any]] = TABLE['generated']
CASES: dict[str, dict[str, Any]] = {case['id']: case for case in TABLE['cases']}
ROWS = GENERATED + [case for case in TABLE['cases'] if 'values' not in case]  # `values`: compared differently
GREEDY_WRONG = [row for row in ROWS if row['greedy_wrong']]
DEEPEVAL: dict[str, dict[str, Any]] = {case['id']: case for case in TABLE['deepeval']}

SAME = {a: a for a in ARGS}
SWAP = {'exact': 'exact', 'ignore': 'ignore', 'subset': 'superset', 'superset': 'subset'}
BOTH_WAYS = {'exact': 'exact', 'ignore': 'ignore', 'subset': 'exact', 'superset': 'exact'}
ARGUMENT_MAP = {'strict': SAME, 'superset': SAME, 'subset': SWAP, 'unordered': BOTH_WAYS}

# The callables the script gives LangChain as overrides, by the names the table uses.
CALLABLES: dict[str, Callable[[dict[str, Any], dict[str, Any]], bool]] = {
    'same_query_any_case': lambda first, second: (
        str(first.get('query', '')).lower() == str(second.get('query', '')).lower()
    ),
    'limit_at_least': lambda first, second: first.get('limit', 0) >= second.get('limit', 0),
}
SYMMETRIC = {'same_query_any_case'}


def swapped(function: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda actual, expected: function(expected, actual)


def our_options(mode: str, args_mode: str, overrides: dict[str, Any] | None) -> dict[str, Any] | None:
    """Our `tool_call_match` options for LangChain's mode and argument mode; None when none are equivalent."""
    options: dict[str, Any] = {'mode': mode, 'arguments': ARGUMENT_MAP[mode][args_mode]}
    if overrides:
        tool_arguments: dict[str, Any] = {}
        for tool, rule in overrides.items():
            if isinstance(rule, str):
                tool_arguments[tool] = ARGUMENT_MAP[mode][rule]
            elif isinstance(rule, list):
                tool_arguments[tool] = rule
            else:
                function = CALLABLES[rule['callable']]
                if mode == 'unordered' and rule['callable'] not in SYMMETRIC:
                    return None
                tool_arguments[tool] = swapped(function) if mode == 'subset' else function
        options['tool_arguments'] = tool_arguments
    return options


def flat_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation's calls as `{name, arguments}` dicts (arguments parsed)."""
    return [
        {'name': call['function']['name'], 'arguments': json.loads(call['function']['arguments'])}
        for message in messages
        if message['role'] == 'assistant'
        for call in message.get('tool_calls') or []
    ]


def ours(row: dict[str, Any], mode: str, args_mode: str) -> bool | None:
    options = our_options(mode, args_mode, row.get('overrides'))
    if options is None:
        return None
    value = tool_call_match(row['outputs'], row['reference'], **options).value
    if mode != 'strict':  # order-free modes: the calls alone give the same answer
        assert tool_call_match(flat_calls(row['outputs']), flat_calls(row['reference']), **options).value == value
    assert isinstance(value, bool)
    return value


def test_the_table_is_agentevals_0_0_9() -> None:
    assert TABLE['versions']['agentevals'] == '0.0.9'
    assert len(GENERATED) == 320
    assert 15 <= sum(row['greedy_wrong'] for row in GENERATED) <= 60
    assert sum(not row['roles_align'] for row in GENERATED) > 50
    assert len({json.dumps(row['langchain'], sort_keys=True) for row in GENERATED}) > 20  # many distinct outcomes
    for row in ROWS:  # greedy pairing can only miss a pairing, never invent one
        for mode in MODES:
            for index, theirs in enumerate(row['langchain'][mode]):
                if f'{mode}/{ARGS[index]}' in row['greedy_wrong_in']:
                    assert theirs is False and row['oracle'][mode][index] in (True, None)


@pytest.mark.parametrize('row', ROWS, ids=[row['id'] for row in ROWS])
def test_same_as_langchain_where_its_greedy_pairing_is_right(row: dict[str, Any]) -> None:
    """Every mode pair of every row: ours equals LangChain's value, or, where LangChain's greedy pairing is wrong
    (`greedy_wrong_in`) or its strict mode compares other messages (`roles_align` false), the oracle's."""
    differences = []
    for mode in MODES:
        for index, args_mode in enumerate(ARGS):
            mine = ours(row, mode, args_mode)
            if mine is None:
                continue
            oracle, theirs = row['oracle'][mode][index], row['langchain'][mode][index]
            assert oracle is not None
            compare_with_langchain = f'{mode}/{args_mode}' not in row['greedy_wrong_in'] and (
                mode != 'strict' or row['roles_align']
            )
            wanted = theirs if compare_with_langchain else oracle
            if mine != wanted or mine != oracle:
                differences.append(f'{mode}/{args_mode}: ours {mine}, LangChain {theirs}, oracle {oracle}')
    assert not differences, row['perturbations'] if 'perturbations' in row else row['description']


@pytest.mark.parametrize('row', GREEDY_WRONG, ids=[row['id'] for row in GREEDY_WRONG])
def test_where_langchain_is_wrong_we_find_the_pairing(row: dict[str, Any]) -> None:
    """The rows where LangChain's first-fit pairing fails although a valid pairing exists: ours finds it."""
    for where in row['greedy_wrong_in']:
        mode, args_mode = where.split('/')
        index = ARGS.index(args_mode)
        assert row['langchain'][mode][index] is False
        if row['oracle'][mode][index] is not None:
            assert row['oracle'][mode][index] is True
            assert ours(row, mode, args_mode) is True, where


def test_where_only_the_roles_differ_langchain_strict_fails_and_ours_passes() -> None:
    rows = [row for row in GENERATED if not row['roles_align'] and row['oracle']['strict'][0]]
    assert rows  # generated rows with an extra user or system message and the same responses
    for row in [*rows, CASES['follow-up-user-message'], CASES['system-prompt']]:
        assert row['langchain']['strict'] == [False] * 4
        assert [ours(row, 'strict', args_mode) for args_mode in ARGS] == [True] * 4


# -- the issue's example ----------------------------------------------------------------------------------------

REFERENCE = [{'name': 'a', 'arguments': {'x': 1}}, {'name': 'a', 'arguments': {'x': 1, 'y': 2}}]
ACTUAL = [{'name': 'a', 'arguments': {'x': 1, 'y': 2}}, {'name': 'a', 'arguments': {'x': 1}}]


def test_issue_example_langchain_superset_fails_although_a_pairing_exists() -> None:
    case = CASES['issue-superset-args']
    assert flat_calls(case['reference']) == REFERENCE and flat_calls(case['outputs']) == ACTUAL
    superset = ARGS.index('superset')
    assert case['langchain']['superset'][superset] is False  # agentevals 0.0.9 itself
    assert case['oracle']['superset'][superset] is True
    result = tool_call_match(ACTUAL, REFERENCE, mode='superset', arguments='superset')
    assert result.value is True
    assert (
        result.reason
        == 'match (superset, arguments superset): 2 expected, 2 actual call(s); paired: a(x=1), a(x=1, y=2)'
    )
    # Expected a(x=1) pairs with the actual a(x=1); LangChain gives it the first call, a(x=1, y=2), the only one that
    # a(x=1, y=2) could have had.
    assert result.pairs == ((0, 1), (1, 0))
    # From the conversations LangChain scored, as well: superset, and strict with the calls of one response.
    assert tool_call_match(case['outputs'], case['reference'], mode='superset', arguments='superset').value is True
    assert case['langchain']['strict'][superset] is False
    assert tool_call_match(case['outputs'], case['reference'], mode='strict', arguments='superset').value is True


def test_issue_example_every_langchain_mode() -> None:
    """All sixteen combinations on the issue's calls: LangChain fails five although each has a valid pairing."""
    case = CASES['issue-superset-args']
    assert sorted(case['greedy_wrong_in']) == [
        'strict/superset',
        'subset/subset',
        'superset/superset',
        'unordered/subset',
        'unordered/superset',
    ]
    assert all(ours(case, mode, args_mode) for mode in MODES for args_mode in ARGS)


def test_issue_example_mirrored() -> None:
    """Actual and reference swapped: now LangChain's subset mode with `superset` arguments (our `subset`) fails."""
    case = CASES['issue-mirrored']
    assert sorted(case['greedy_wrong_in']) == [
        'strict/subset',
        'subset/superset',
        'superset/subset',
        'unordered/subset',
        'unordered/superset',
    ]
    assert tool_call_match(REFERENCE, ACTUAL, mode='subset', arguments='subset').value is True
    assert tool_call_match(REFERENCE, ACTUAL, mode='superset', arguments='subset').value is True


def test_subset_mode_swaps_the_argument_matcher_and_unordered_checks_both_ways() -> None:
    """The agent added an argument. LangChain's subset mode with `subset` arguments accepts it (the matcher gets the
    reference first); its unordered mode with `superset` arguments rejects it (the matcher runs both ways round)."""
    case = CASES['extra-argument']
    subset, superset = ARGS.index('subset'), ARGS.index('superset')
    assert case['langchain']['subset'][subset] is True and case['langchain']['subset'][superset] is False
    assert case['langchain']['unordered'][superset] is False
    outputs, reference = case['outputs'], case['reference']
    assert tool_call_match(outputs, reference, mode='subset', arguments='subset').value is False
    assert tool_call_match(outputs, reference, mode='subset', arguments='superset').value is True
    assert tool_call_match(outputs, reference, mode='unordered', arguments='superset').value is True
    assert tool_call_match(outputs, reference, mode='unordered', arguments='exact').value is False


def test_overrides_map_to_tool_arguments() -> None:
    keys = CASES['override-keys']
    assert keys['langchain'] == {mode: [True] * 4 for mode in MODES}
    assert tool_call_match(keys['outputs'], keys['reference'], tool_arguments={'search': ['query']}).value is True
    # A mode override swaps in subset mode like the global mode: LangChain's `superset` there is our `subset`.
    mode = CASES['override-mode']
    assert mode['langchain']['superset'] == [False, True, False, True]
    assert mode['langchain']['subset'] == [False, False, False, False]
    for args_mode in ARGS:
        assert ours(mode, 'subset', args_mode) is False
    # An asymmetric callable: LangChain's subset mode calls it (reference, output).
    callable_case = CASES['override-callable-asymmetric']
    assert callable_case['langchain']['superset'] == [True] * 4
    assert callable_case['langchain']['subset'] == [False] * 4
    at_least = CALLABLES['limit_at_least']
    args = {'outputs': callable_case['outputs'], 'reference': callable_case['reference']}
    assert tool_call_match(*args.values(), mode='superset', tool_arguments={'search': at_least}).value is True
    assert tool_call_match(*args.values(), mode='subset', tool_arguments={'search': at_least}).value is True
    assert tool_call_match(*args.values(), mode='subset', tool_arguments={'search': swapped(at_least)}).value is False


def test_langchain_compares_values_with_python_equality_ours_as_json() -> None:
    """LangChain's `==` makes `True` equal `1` (and `1.0`); ours compares canonical JSON, where `1` equals `1.0` but
    not `True`. The generated rows never mix the two, so this is the one row where ours differs on purpose."""
    case = CASES['bool-vs-int']
    assert case['langchain'] == {mode: [True] * 4 for mode in MODES}
    assert [ours(case, mode, 'exact') for mode in MODES] == [False] * 4
    assert [ours(case, mode, 'ignore') for mode in MODES] == [True] * 4


# -- DeepEval ---------------------------------------------------------------------------------------------------


def deepeval_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{'name': call['name'], 'arguments': call['args']} for call in calls]


def test_the_deepeval_cases_are_deepeval_4() -> None:
    assert TABLE['versions']['deepeval'].startswith('4.')
    assert sorted(DEEPEVAL) == [
        'duplicate-calls',
        'duplicate-calls-names-only',
        'duplicate-calls-ordering',
        'greedy-partial-credit',
        'greedy-tie',
    ]


@pytest.mark.parametrize(
    ('case_id', 'arguments'), [('duplicate-calls', 'exact'), ('duplicate-calls-names-only', 'ignore')]
)
def test_where_deepeval_loses_a_repeated_call_ours_pairs_it(case_id: str, arguments: str) -> None:
    """DeepEval's ToolCorrectnessMetric (unordered) keeps matched calls in a set, so an identical second call counts as
    matched already: 0.5 where every expected call was made. Its score is 1.0 exactly when our superset mode passes."""
    case = DEEPEVAL[case_id]
    assert case['deepeval']['score'] == 0.5
    assert case['best_pairing_score'] == 1.0
    called, expected = deepeval_calls(case['called']), deepeval_calls(case['expected'])
    assert tool_call_match(called, expected, mode='superset', arguments=arguments).value is True


def test_deepeval_ordering_mode_is_right_on_repeated_calls() -> None:
    case = DEEPEVAL['duplicate-calls-ordering']
    assert case['deepeval']['score'] == 1.0
    called, expected = deepeval_calls(case['called']), deepeval_calls(case['expected'])
    assert tool_call_match(called, expected, mode='in_order').value is True


@pytest.mark.parametrize('case_id', ['greedy-partial-credit', 'greedy-tie'])
def test_deepeval_greedy_partial_credit_is_below_the_best_pairing(case_id: str) -> None:
    """Partial argument credit, paired greedily: DeepEval's score is below what its own formula gives with the best
    pairing. Ours has no partial credit; both say the expected calls were not all made as expected."""
    case = DEEPEVAL[case_id]
    assert case['deepeval']['score'] < case['best_pairing_score'] < 1.0
    called, expected = deepeval_calls(case['called']), deepeval_calls(case['expected'])
    assert tool_call_match(called, expected, mode='superset').value is False
    if case_id == 'greedy-partial-credit':  # the best pairing would pass DeepEval's default threshold
        assert case['deepeval']['success'] is False
        assert case['best_pairing_score'] >= case['deepeval']['threshold']
