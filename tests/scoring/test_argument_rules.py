"""How one call's arguments compare with the expected ones: the four modes, each kind of key rule,
the per-tool overrides, and the errors a bad configuration raises (naming the tool and the key)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_evals import ToolCallMatch, tool_call_match
from agentic_evals.scoring.argument_rules import parse_matchers


def problems(
    actual: dict[str, Any] | None,
    expected: dict[str, Any] | None,
    *,
    arguments: str = 'exact',
    tool_arguments: Mapping[str, Any] | None = None,
    rules: Mapping[str, Mapping[str, Any]] | None = None,
    tool: str = 't',
    why: str | None = None,
) -> list[str]:
    """What keeps a call of `tool` with `actual` from matching `expected`, as `ToolCallMatch` sees it."""
    default, matchers = parse_matchers(arguments, tool_arguments, rules)
    return matchers.get(tool, default).problems(actual, expected, why)


def pairs(actual: dict[str, Any], expected: dict[str, Any], **options: Any) -> bool:
    """Whether one call pairs with one expected call, through the public function."""
    return tool_call_match(
        [{'name': 't', 'arguments': actual}], [{'name': 't', 'arguments': expected}], **options
    ).value


# -- the modes ---------------------------------------------------------------------------------------


MODES = ('exact', 'subset', 'superset', 'ignore')


@pytest.mark.parametrize(
    ('actual', 'expected', 'verdicts'),
    [
        # the same arguments: every mode
        ({'x': 1, 'y': 'a'}, {'y': 'a', 'x': 1}, (True, True, True, True)),
        # the call leaves a key out: subset only (and ignore)
        ({'x': 1}, {'x': 1, 'y': 2}, (False, True, False, True)),
        # the call adds a key: superset only (and ignore)
        ({'x': 1, 'y': 2}, {'x': 1}, (False, False, True, True)),
        # a key in common with another value: no mode but ignore
        ({'x': 2, 'y': 2}, {'x': 1}, (False, False, False, True)),
        ({'x': 2}, {'x': 1, 'y': 2}, (False, False, False, True)),
        # both sides empty, or only one
        ({}, {}, (True, True, True, True)),
        ({}, {'x': 1}, (False, True, False, True)),
        ({'x': 1}, {}, (False, False, True, True)),
        # values compare as JSON: 1 == 1.0, but not '1' or True; nested dicts in any key order, as a whole
        ({'x': 1.0}, {'x': 1}, (True, True, True, True)),
        ({'x': '1'}, {'x': 1}, (False, False, False, True)),
        ({'x': True}, {'x': 1}, (False, False, False, True)),
        ({'x': {'b': [1, 2], 'a': None}}, {'x': {'a': None, 'b': [1, 2]}}, (True, True, True, True)),
        ({'x': {'a': 1}}, {'x': {'a': 1, 'b': 2}}, (False, False, False, True)),  # nested: no subset
        ({'x': [2, 1]}, {'x': [1, 2]}, (False, False, False, True)),
    ],
)
def test_modes(actual: dict[str, Any], expected: dict[str, Any], verdicts: tuple[bool, ...]) -> None:
    assert tuple(not problems(actual, expected, arguments=mode) for mode in MODES) == verdicts
    assert tuple(pairs(actual, expected, arguments=mode) for mode in MODES) == verdicts


def test_what_each_mode_reports() -> None:
    actual, expected = {'a': 1, 'b': 2, 'z': 0}, {'a': 1, 'b': 3, 'c': 4}
    assert problems(actual, expected) == [
        "key 'b': expected 3, got 2",
        "missing key 'c'",
        "unexpected key 'z'",
    ]
    assert problems(actual, expected, arguments='subset') == ["key 'b': expected 3, got 2", "unexpected key 'z'"]
    assert problems(actual, expected, arguments='superset') == ["key 'b': expected 3, got 2", "missing key 'c'"]
    assert problems(actual, expected, arguments='ignore') == []


def test_no_expected_arguments_match_anything_and_unreadable_ones_nothing() -> None:
    for mode in MODES:
        assert problems({'x': 1}, None, arguments=mode) == []
        assert problems(None, None, arguments=mode, why='not JSON') == []
    for mode in ('exact', 'subset', 'superset'):
        assert problems(None, {'x': 1}, arguments=mode, why='could not be parsed') == ['arguments could not be parsed']
        assert problems(None, {}, arguments=mode) == ['arguments unreadable']
    assert problems(None, {'x': 1}, arguments='ignore') == []  # names only: arguments are never read


# -- key rules ---------------------------------------------------------------------------------------


def rule(spec: Any, actual: Any, expected: Any = None, *, arguments: str = 'exact') -> list[str]:
    """The problems of one key `k` under `spec` (a missing side when its value is `...`)."""
    a = {} if actual is ... else {'k': actual}
    e = {} if expected is ... else {'k': expected}
    return problems(a, e, arguments=arguments, rules={'t': {'k': spec}})


def test_ignore() -> None:
    assert rule('ignore', 1, 2) == []
    assert rule('ignore', 1, ...) == []  # absent from the expectation: not unexpected
    assert rule('ignore', ..., 2) == []  # absent from the call: not missing
    assert problems({'k': 1, 'x': 2}, {'k': 2, 'x': 3}, rules={'t': {'k': 'ignore'}}) == [
        "key 'x': expected 3, got 2"  # the other keys still compare
    ]


def test_absolute_tolerance() -> None:
    assert rule({'abs': 0.5}, 10.5, 10) == []
    assert rule({'abs': 0.5}, 9.5, 10) == []  # the bound itself is in
    assert rule({'abs': 0.5}, 10.6, 10) == ["key 'k': expected 10 (abs 0.5), got 10.6"]
    assert rule({'abs': 0}, 10.0, 10) == []
    # only numbers are close: text and booleans compare as JSON
    assert rule({'abs': 5}, '10', 10) == ["key 'k': expected 10 (abs 5), got '10'"]
    assert rule({'abs': 5}, True, 1) == ["key 'k': expected 1 (abs 5), got True"]
    assert rule({'abs': 5}, 'x', 'x') == []


def test_relative_tolerance() -> None:
    assert rule({'rel': 0.05}, 105, 100) == []
    assert rule({'rel': 0.05}, 94, 100) == ["key 'k': expected 100 (rel 0.05), got 94"]
    # relative to the larger magnitude (math.isclose): 95 is within 5% of 100
    assert rule({'rel': 0.05}, 95, 100) == []
    # both: either bound is enough
    assert rule({'abs': 1, 'rel': 0.01}, 0.5, 0) == []
    assert rule({'abs': 1, 'rel': 0.01}, 1001, 1010) == []
    assert rule({'abs': 1, 'rel': 0.001}, 1003, 1010) == ["key 'k': expected 1010 (abs 1, rel 0.001), got 1003"]


def test_regex() -> None:
    assert rule({'regex': r'A\d+'}, 'A12') == []
    assert rule({'regex': r'A\d+'}, 'A12', 'anything: the rule alone says what is allowed') == []
    # the whole value must match, not a part of it
    assert rule({'regex': r'A\d+'}, 'xA12') == ["key 'k': expected a match of 'A\\\\d+', got 'xA12'"]
    assert rule({'regex': r'A\d+'}, 'A12x') != []
    assert rule({'regex': r'A\d+'}, 'a12') != []
    assert rule({'regex': r'\d+'}, 12) == ["key 'k': expected a match of '\\\\d+', got 12"]  # text only
    assert rule({'regex': r'A\d+', 'ignore_case': True}, 'a12') == []
    assert rule({'regex': r'a b', 'ignore_whitespace': True}, '  a \n b ') == []
    assert rule({'regex': r'a b'}, 'a  b') != []


def test_case_and_whitespace() -> None:
    assert rule({'ignore_case': True}, 'Damaged ITEM', 'damaged item') == []
    assert rule({'ignore_case': True}, 'damaged  item', 'damaged item') == [
        "key 'k': expected 'damaged item' (any case), got 'damaged  item'"
    ]
    assert rule({'ignore_whitespace': True}, ' damaged \t item\n', 'damaged item') == []
    assert rule({'ignore_whitespace': True}, 'damageditem', 'damaged item') == [
        "key 'k': expected 'damaged item' (any spacing), got 'damageditem'"
    ]
    assert rule({'ignore_whitespace': True}, 'Damaged item', 'damaged item') != []
    assert rule({'ignore_case': True, 'ignore_whitespace': True}, 'DAMAGED   Item', ' damaged item') == []
    assert rule({'ignore_case': True}, 1, '1') != []  # text only


def test_one_of() -> None:
    assert rule({'one_of': ['Refunded', 'Done', 3]}, 'Done') == []
    assert rule({'one_of': ['Refunded', 'Done', 3]}, 3.0) == []
    assert rule({'one_of': ['Refunded', 'Done']}, 'done') == [
        "key 'k': expected one of ['Refunded', 'Done'], got 'done'"
    ]
    assert rule({'one_of': ['Refunded', 'Done'], 'ignore_case': True}, 'done') == []
    assert rule({'one_of': [{'a': 1}, [1, 2]]}, {'a': 1.0}) == []


def test_a_callable_rule() -> None:
    seen: list[tuple[Any, Any]] = []

    def even(actual: Any, expected: Any) -> bool:
        seen.append((actual, expected))
        return isinstance(actual, int) and actual % 2 == 0

    assert rule(even, 4, 7) == []
    assert rule(even, 3, 7) == ["key 'k': expected a value the check accepts, got 3"]
    assert rule(even, 4, ...) == []  # counts as expected: not an unexpected key
    assert seen == [(4, 7), (3, 7), (4, None)]  # expected is None when the expectation has no value
    assert rule(even, ..., 4) == ["missing key 'k'"]
    assert pairs({'k': 4}, {}, argument_rules={'t': {'k': even}})
    assert not pairs({'k': 5}, {}, argument_rules={'t': {'k': even}})


# -- dotted paths ------------------------------------------------------------------------------------


def test_dotted_paths_reach_into_nested_dicts() -> None:
    expected = {'customer': {'id': 7, 'address': {'city': 'paris', 'zip': '75001'}}, 'text': 'hi'}
    actual = {'customer': {'id': 7, 'address': {'city': 'PARIS', 'zip': '75001'}}, 'text': 'hi'}
    city = {'t': {'customer.address.city': {'ignore_case': True}}}
    assert problems(actual, expected) == [
        "key 'customer': expected {'id': 7, 'address': {'city': 'paris', 'zip': '75001'}}, got"
        " {'id': 7, 'address': {'city': 'PARIS', 'zip': '75001'}}"
    ]
    assert problems(actual, expected, rules=city) == []
    # the rest of the nested dict still compares exactly
    other = {'customer': {'id': 8, 'address': {'city': 'PARIS', 'zip': '75001'}}, 'text': 'hi'}
    assert problems(other, expected, rules=city) == [
        "key 'customer': expected {'id': 7, 'address': {'zip': '75001'}}, got {'id': 8, 'address': {'zip': '75001'}}"
    ]
    wrong = {'customer': {'id': 7, 'address': {'city': 'lyon', 'zip': '75001'}}, 'text': 'hi'}
    assert problems(wrong, expected, rules=city) == [
        "key 'customer.address.city': expected 'paris' (any case), got 'lyon'"
    ]


def test_ignoring_a_nested_key_leaves_no_empty_dict_behind() -> None:
    rules = {'t': {'meta.request_id': 'ignore'}}
    assert (
        problems({'q': 'x', 'meta': {'request_id': 'r1'}}, {'q': 'x', 'meta': {'request_id': 'r2'}}, rules=rules) == []
    )
    # the expectation has no `meta` at all: the call's `meta` held only the ignored key
    assert problems({'q': 'x', 'meta': {'request_id': 'r1'}}, {'q': 'x'}, rules=rules) == []
    assert problems({'q': 'x', 'meta': {'request_id': 'r1', 'user': 'u'}}, {'q': 'x'}, rules=rules) == [
        "unexpected key 'meta'"
    ]


def test_a_dotted_path_through_a_value_that_is_not_a_dict_is_absent() -> None:
    rules = {'t': {'a.b': {'one_of': [1, 2]}}}
    assert problems({'a': {'b': 2}}, {}, rules=rules) == []
    assert problems({'a': 5}, {}, rules=rules) == ["missing key 'a.b'", "unexpected key 'a'"]
    assert problems({'a': 5}, {}, rules=rules, arguments='ignore') == []


def test_rules_do_not_change_the_callers_dicts() -> None:
    actual = {'meta': {'id': 1, 'x': 2}, 'q': 'x'}
    expected = {'meta': {'id': 3, 'x': 2}, 'q': 'x'}
    assert problems(actual, expected, rules={'t': {'meta.id': 'ignore'}}) == []
    assert actual == {'meta': {'id': 1, 'x': 2}, 'q': 'x'}
    assert expected == {'meta': {'id': 3, 'x': 2}, 'q': 'x'}


# -- rules and the argument modes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ('spec', 'actual', 'expected', 'by_mode'),
    [
        # a rule that says what is allowed: the key counts as expected though the expectation has no value
        ({'regex': 'A.'}, 'A1', ..., {'exact': [], 'subset': [], 'superset': [], 'ignore': []}),
        ({'one_of': [1, 2]}, 2, ..., {'exact': [], 'subset': [], 'superset': [], 'ignore': []}),
        # (`ignore` reads no arguments, so no rule applies under it)
        (
            {'regex': 'A.'},
            'B1',
            ...,
            {**{m: ["key 'k': expected a match of 'A.', got 'B1'"] for m in MODES}, 'ignore': []},
        ),
        # ... and is missing from a call without it where the mode wants every expected key
        (
            {'regex': 'A.'},
            ...,
            ...,
            {'exact': ["missing key 'k'"], 'subset': [], 'superset': ["missing key 'k'"], 'ignore': []},
        ),
        (
            {'one_of': [1]},
            ...,
            ...,
            {'exact': ["missing key 'k'"], 'subset': [], 'superset': ["missing key 'k'"], 'ignore': []},
        ),
        # a tolerance needs an expected value: without one the call's key is unexpected
        (
            {'abs': 1},
            5,
            ...,
            {'exact': ["unexpected key 'k'"], 'subset': ["unexpected key 'k'"], 'superset': [], 'ignore': []},
        ),
        (
            {'abs': 1},
            ...,
            5,
            {'exact': ["missing key 'k'"], 'subset': [], 'superset': ["missing key 'k'"], 'ignore': []},
        ),
        ({'abs': 1}, 5.5, 5, {'exact': [], 'subset': [], 'superset': [], 'ignore': []}),
        (
            {'ignore_case': True},
            'X',
            ...,
            {'exact': ["unexpected key 'k'"], 'subset': ["unexpected key 'k'"], 'superset': [], 'ignore': []},
        ),
        # ignored keys are neither missing nor unexpected in any mode
        ('ignore', ..., 5, {m: [] for m in MODES}),
        ('ignore', 5, ..., {m: [] for m in MODES}),
    ],
)
def test_rules_under_each_mode(spec: Any, actual: Any, expected: Any, by_mode: dict[str, list[str]]) -> None:
    assert {mode: rule(spec, actual, expected, arguments=mode) for mode in MODES} == by_mode


# -- per tool ----------------------------------------------------------------------------------------


def test_the_star_tool_applies_to_every_tool_and_a_tools_own_rule_wins() -> None:
    rules = {'*': {'id': 'ignore', 'n': {'abs': 1}}, 'b': {'n': {'abs': 10}}}
    assert problems({'id': 1, 'n': 5}, {'id': 2, 'n': 5.9}, rules=rules, tool='a') == []
    assert problems({'id': 1, 'n': 5}, {'id': 2, 'n': 7}, rules=rules, tool='a') == [
        "key 'n': expected 7 (abs 1), got 5"
    ]
    assert problems({'id': 1, 'n': 5}, {'id': 2, 'n': 14}, rules=rules, tool='b') == []  # b's own tolerance
    assert problems({'id': 1, 'n': 5}, {'id': 2, 'n': 16}, rules=rules, tool='b') == [
        "key 'n': expected 16 (abs 10), got 5"
    ]
    # a tool with only a mode override keeps the '*' rules
    assert (
        problems({'id': 1, 'n': 5, 'z': 0}, {'id': 2, 'n': 5}, rules=rules, tool='c', tool_arguments={'c': 'superset'})
        == []
    )
    assert problems({'id': 1, 'n': 5, 'z': 0}, {'id': 2, 'n': 5}, rules=rules, tool='d') == ["unexpected key 'z'"]


def test_tool_arguments_mode_per_tool() -> None:
    overrides = {'search': 'superset', 'log': 'ignore'}
    assert problems({'q': 'x', 'page': 2}, {'q': 'x'}, tool_arguments=overrides, tool='search') == []
    assert problems({'q': 'x', 'page': 2}, {'q': 'x'}, tool_arguments=overrides, tool='fetch') == [
        "unexpected key 'page'"
    ]
    assert problems({'anything': 1}, {'else': 2}, tool_arguments=overrides, tool='log') == []
    assert problems({'q': 'x'}, {'q': 'x', 'page': 2}, arguments='subset', tool_arguments={'s': 'exact'}, tool='s') == [
        "missing key 'page'"
    ]


def test_a_key_list_compares_those_keys_alone() -> None:
    keys = {'search': ['q', 'filters.lang']}
    expected = {'q': 'x', 'filters': {'lang': 'en', 'since': 2020}, 'page': 1}
    assert (
        problems({'q': 'x', 'filters': {'lang': 'en'}, 'debug': True}, expected, tool_arguments=keys, tool='search')
        == []
    )
    assert problems({'q': 'y', 'filters': {'lang': 'fr'}}, expected, tool_arguments=keys, tool='search') == [
        "key 'q': expected 'x', got 'y'",
        "key 'filters.lang': expected 'en', got 'fr'",
    ]
    # LangChain reads an absent key as None: absent on both sides is equal, on one side it is not
    assert problems({'q': 'x'}, {'q': 'x'}, tool_arguments=keys, tool='search') == []
    assert problems({'q': 'x'}, expected, tool_arguments=keys, tool='search') == [
        "key 'filters.lang': expected 'en', got nothing"
    ]
    assert pairs({'q': 'x', 'z': 1}, {'q': 'x'}, tool_arguments={'t': ['q']})


def test_a_callable_for_a_whole_tool() -> None:
    seen: list[tuple[Any, Any]] = []

    def same_query(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
        seen.append((actual, expected))
        return actual['q'].lower() == expected['q'].lower()

    assert problems({'q': 'X', 'page': 2}, {'q': 'x'}, tool_arguments={'t': same_query}) == []
    assert problems({'q': 'Y'}, {'q': 'x'}, tool_arguments={'t': same_query}) == [
        "{'q': 'Y'} rejected by the argument check"
    ]
    assert seen == [({'q': 'X', 'page': 2}, {'q': 'x'}), ({'q': 'Y'}, {'q': 'x'})]
    # the callable decides even under `ignore`, and is not asked when the expectation has no arguments
    assert problems({'q': 'Y'}, {'q': 'x'}, arguments='ignore', tool_arguments={'t': same_query}) != []
    assert problems({'q': 'Y'}, None, tool_arguments={'t': same_query}) == []
    assert len(seen) == 3
    assert tool_call_match(
        [{'name': 't', 'arguments': {'q': 'X'}}, {'name': 'u', 'arguments': {'q': 'X'}}],
        [{'name': 't', 'arguments': {'q': 'x'}}, {'name': 'u', 'arguments': {'q': 'x'}}],
        mode='unordered',
        tool_arguments={'t': same_query},
    ).reason == (
        "no match (unordered, arguments exact): 1 of 2 expected call(s) not made; paired: t(q='x') ~ t(q='X');"
        " missing: u(q='x'); extra: u(q='X'); argument mismatches: u(q='x') vs u(q='X'): key 'q': expected 'x', got 'X'"
    )


def test_a_callable_is_asked_for_every_pair_of_calls() -> None:
    """Calls with equal arguments may be compared once, but not when a callable decides (it may tell
    apart values that compare equal as JSON, like 1 and 1.0)."""

    def integers(actual: Any, expected: Any) -> bool:
        return type(actual) is int

    calls = [{'name': 't', 'arguments': {'k': 1.0}}, {'name': 't', 'arguments': {'k': 1}}]
    expected = [{'name': 't', 'arguments': {'k': 1}}]
    result = tool_call_match(calls, expected, mode='superset', argument_rules={'t': {'k': integers}})
    assert result.value is True
    assert result.pairs == ((0, 1),)


# -- errors --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('arguments', 'tool_arguments', 'rules', 'message'),
    [
        ('exactly', None, None, "arguments must be one of 'exact', 'ignore', 'subset', 'superset'; got 'exactly'"),
        (True, None, None, "arguments must be one of 'exact', 'ignore', 'subset', 'superset'; got True"),
        (
            'exact',
            {'search': 'loose'},
            None,
            "tool_arguments['search'] must be one of 'exact', 'ignore', 'subset', 'superset', a list of keys or a"
            " callable; got 'loose'",
        ),
        ('exact', {'search': ['q', '']}, None, "tool_arguments['search'] must be one of"),
        ('exact', ['search'], None, "tool_arguments must be a mapping of tool names, got ['search']"),
        (
            'exact',
            None,
            {'': {'k': 'ignore'}},
            "argument_rules must be a mapping of tool names, got {'': {'k': 'ignore'}}",
        ),
        (
            'exact',
            None,
            {'refund': ['amount']},
            "argument_rules['refund'] must map argument keys to rules, got ['amount']",
        ),
        (
            'exact',
            None,
            {'refund': {'amount': {'tolerance': 0.1}}},
            "argument_rules['refund']['amount']: unknown rule 'tolerance' (known: abs, rel, regex, ignore_case,"
            ' ignore_whitespace, one_of)',
        ),
        (
            'exact',
            None,
            {'refund': {'amount': {'abs': -1}}},
            "argument_rules['refund']['amount']: abs must be a number >= 0, got -1",
        ),
        (
            'exact',
            None,
            {'refund': {'amount': {'rel': float('inf')}}},
            "argument_rules['refund']['amount']: rel must be a number >= 0, got inf",
        ),
        (
            'exact',
            None,
            {'refund': {'amount': {'abs': float('nan')}}},
            "argument_rules['refund']['amount']: abs must be a number >= 0, got nan",
        ),
        (
            'exact',
            None,
            {'refund': {'amount': {'abs': True}}},
            "argument_rules['refund']['amount']: abs must be a number >= 0, got True",
        ),
        (
            'exact',
            None,
            {'refund': {'amount': {'abs': '0.1'}}},
            "argument_rules['refund']['amount']: abs must be a number >= 0, got '0.1'",
        ),
        (
            'exact',
            None,
            {'*': {'id': {'regex': '('}}},
            "argument_rules['*']['id']: regex '(' does not compile: missing ), unterminated subpattern",
        ),
        ('exact', None, {'t': {'id': {'regex': 5}}}, "argument_rules['t']['id']: regex must be a string, got 5"),
        (
            'exact',
            None,
            {'t': {'id': {'regex': 'a', 'one_of': ['a']}}},
            "argument_rules['t']['id']: give regex or one_of, not both",
        ),
        (
            'exact',
            None,
            {'t': {'id': {'one_of': []}}},
            "argument_rules['t']['id']: one_of must be a non-empty list of values, got []",
        ),
        (
            'exact',
            None,
            {'t': {'id': {'one_of': 'ab'}}},
            "argument_rules['t']['id']: one_of must be a non-empty list of values, got 'ab'",
        ),
        (
            'exact',
            None,
            {'t': {'id': {'ignore_case': 'yes'}}},
            "argument_rules['t']['id']: ignore_case must be true or false, got 'yes'",
        ),
        ('exact', None, {'t': {'id': {}}}, "argument_rules['t']['id'] must be 'ignore', a mapping of abs, rel, regex"),
        (
            'exact',
            None,
            {'t': {'id': 'skip'}},
            "argument_rules['t']['id'] must be 'ignore', a mapping of abs, rel, regex",
        ),
        ('exact', None, {'t': {'a..b': 'ignore'}}, "argument_rules['t']: 'a..b' is not a key or dotted path"),
        ('exact', None, {'t': {'': 'ignore'}}, "argument_rules['t']: '' is not a key or dotted path"),
    ],
)
def test_configuration_errors_name_the_tool_and_key(
    arguments: Any, tool_arguments: Any, rules: Any, message: str
) -> None:
    with pytest.raises(ValueError, match='^' + re.escape(message)):
        parse_matchers(arguments, tool_arguments, rules)
    # the evaluator raises the same when it is built, and the function when it is called
    with pytest.raises(ValueError, match='^ToolCallMatch: ' + re.escape(message)):
        ToolCallMatch([], arguments=arguments, tool_arguments=tool_arguments, argument_rules=rules)
    with pytest.raises(ValueError, match='^' + re.escape(message)):
        tool_call_match([], [], arguments=arguments, tool_arguments=tool_arguments, argument_rules=rules)


_VALUES = st.one_of(st.integers(-2, 2), st.sampled_from([0.5, 1.0, 'a', 'A ', 'b', True, None]))
_ARGS = st.dictionaries(st.sampled_from(['k', 'm', 'n']), _VALUES, max_size=3)
_RULES = st.dictionaries(
    st.sampled_from(['k', 'm', 'n.x']),
    st.sampled_from(
        [
            'ignore',
            {'abs': 1},
            {'rel': 0.5},
            {'ignore_case': True, 'ignore_whitespace': True},
            {'one_of': [1, 'a']},
            {'regex': 'a.*'},
        ]
    ),
    max_size=2,
)


@settings(max_examples=400, deadline=None)
@given(
    mode=st.sampled_from(['exact', 'ignore', 'subset', 'superset']),
    rules=_RULES,
    actual=st.one_of(st.none(), _ARGS, st.builds(lambda d, x: {**d, 'n': {'x': x}}, _ARGS, _VALUES)),
    expected=st.one_of(st.none(), _ARGS, st.builds(lambda d, x: {**d, 'n': {'x': x, 'y': 1}}, _ARGS, _VALUES)),
)
def test_the_quick_verdict_is_the_worded_one(
    mode: str, rules: dict[str, Any], actual: dict[str, Any] | None, expected: dict[str, Any] | None
) -> None:
    """Pairing asks `matches`; reasons come from `problems`: they must never disagree."""
    _, matchers = parse_matchers(mode, None, {'t': rules})
    matcher = matchers.get('t')
    assert matcher is not None or not rules
    if matcher is None:
        return
    assert matcher.matches(actual, expected) == (not matcher.problems(actual, expected, 'unreadable'))
