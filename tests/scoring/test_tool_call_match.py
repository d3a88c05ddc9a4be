"""`tool_call_match`: every mode and argument mode, the reasons, optimal pairing, the inputs it reads,
`strict` on model responses, and hypothesis properties checked against a brute-force oracle."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentic_evals import Trajectory, extract_trajectory, tool_call_match, trajectory_from_messages

from ..factories import TreeBuilder

MODES = ('strict', 'unordered', 'subset', 'superset', 'in_order')
ARGUMENT_MODES = ('exact', 'subset', 'superset', 'ignore')


def c(name: str, **arguments: Any) -> dict[str, Any]:
    return {'name': name, 'arguments': arguments}


def verdicts(actual: Any, expected: Any, **options: Any) -> dict[str, bool]:
    return {mode: tool_call_match(actual, expected, mode=mode, **options).value for mode in MODES}


# -- every mode under every argument mode --------------------------------------------------------------

EXPECTED = [c('a', x=1), c('b', y=1)]
# a call of `a` whose arguments pair with a(x=1) under each argument mode, and one whose do not
GOOD = {'exact': c('a', x=1), 'subset': c('a'), 'superset': c('a', x=1, z=0), 'ignore': c('a', x=2)}
BAD = {'exact': c('a', x=1, z=0), 'subset': c('a', x=1, z=0), 'superset': c('a'), 'ignore': c('c', x=1)}
B, OTHER = c('b', y=1), c('c')

# the layout of the actual calls, and the verdict of (strict, unordered, subset, superset, in_order)
LAYOUTS: dict[str, tuple[Callable[[dict[str, Any], dict[str, Any]], list[dict[str, Any]]], tuple[bool, ...]]] = {
    'the same calls in order': (lambda good, bad: [good, B], (True, True, True, True, True)),
    'in another order': (lambda good, bad: [B, good], (False, True, True, True, False)),
    'and one more at the end': (lambda good, bad: [good, B, OTHER], (False, False, False, True, True)),
    'and one more in between': (lambda good, bad: [good, OTHER, B], (False, False, False, True, True)),
    'and one more, out of order': (lambda good, bad: [B, OTHER, good], (False, False, False, True, False)),
    'a repeated call': (lambda good, bad: [good, good, B], (False, False, False, True, True)),
    'one left out': (lambda good, bad: [good], (False, False, True, False, False)),
    'nothing': (lambda good, bad: [], (False, False, True, False, False)),
    'arguments that do not match': (lambda good, bad: [bad, B], (False, False, False, False, False)),
}


@pytest.mark.parametrize('arguments', ARGUMENT_MODES)
@pytest.mark.parametrize('layout', list(LAYOUTS))
def test_every_mode_under_every_argument_mode(layout: str, arguments: str) -> None:
    build, expected_verdicts = LAYOUTS[layout]
    actual = build(GOOD[arguments], BAD[arguments])
    assert verdicts(actual, EXPECTED, arguments=arguments) == dict(zip(MODES, expected_verdicts, strict=True))


def test_the_issue_example_under_every_argument_mode() -> None:
    actual = [c('a', x=1, y=2), c('a', x=1)]
    expected = [c('a', x=1), c('a', x=1, y=2)]
    table = {arguments: verdicts(actual, expected, arguments=arguments) for arguments in ARGUMENT_MODES}
    assert table == {
        # the same two calls in the other order: every unordered mode pairs them crosswise
        'exact': {'strict': False, 'unordered': True, 'subset': True, 'superset': True, 'in_order': False},
        # a(x=1) can also stand for a(x=1, y=2) (subset) or the reverse (superset), but not both ways
        # round in order: in_order needs a(x=1, y=2) after a call that a(x=1) pairs with
        'subset': {'strict': False, 'unordered': True, 'subset': True, 'superset': True, 'in_order': False},
        'superset': {'strict': False, 'unordered': True, 'subset': True, 'superset': True, 'in_order': False},
        'ignore': {'strict': True, 'unordered': True, 'subset': True, 'superset': True, 'in_order': True},
    }


def test_in_order_under_subset_arguments_places_each_call_after_the_previous_one() -> None:
    # a(x=1) pairs with a(x=1, y=2) under subset arguments (the call's arguments are a subset of the expected)
    actual = [c('a', x=1), c('a', x=1)]
    assert tool_call_match(actual, [c('a', x=1, y=2), c('a', x=1)], mode='in_order', arguments='subset').value
    assert not tool_call_match(
        actual, [c('a', x=1), c('a', x=1, z=3), c('a')], mode='in_order', arguments='subset'
    ).value


def test_expected_calls_without_arguments_match_any_call_of_the_tool() -> None:
    actual = [c('a', x=1, y=[1, 2]), c('b')]
    for arguments in ARGUMENT_MODES:
        assert tool_call_match(actual, [{'name': 'a'}, {'name': 'b'}], arguments=arguments).value
        assert tool_call_match(
            actual, [{'name': 'a', 'arguments': None}, {'name': 'b', 'args': None}], arguments=arguments
        ).value
        assert not tool_call_match(actual, [{'name': 'b'}, {'name': 'a'}], arguments=arguments).value
    # an empty mapping is no arguments at all, not any arguments
    assert not tool_call_match(actual, [c('a'), c('b')]).value
    # unreadable arguments still pair with an expectation that gives none
    assert tool_call_match([{'name': 'a', 'arguments': '{oops'}], [{'name': 'a'}]).value


# -- reasons -----------------------------------------------------------------------------------------


def test_a_match_lists_the_pairing() -> None:
    result = tool_call_match([c('a', x=1.0), c('b', q='x')], [c('a', x=1), {'name': 'b'}], mode='unordered')
    assert result.value is True
    # a pair reads once when both sides read the same, else `expected ~ actual`
    assert result.reason == (
        "match (unordered, arguments exact): 2 expected, 2 actual call(s); paired: a(x=1) ~ a(x=1.0), b(...) ~ b(q='x')"
    )
    assert result.pairs == ((0, 0), (1, 1))
    assert result.missing == result.extra == result.mismatches == ()


def test_a_mismatch_lists_the_missing_the_extra_and_how_arguments_differ() -> None:
    actual = [c('c'), c('a', x=2, z=0), c('a', x=1)]
    expected = [c('a', x=1), c('a', x=1, y=3), c('b')]
    result = tool_call_match(actual, expected, mode='unordered')
    assert result.value is False
    assert result.reason == (
        'no match (unordered, arguments exact): 2 of 3 expected call(s) not made;'
        ' paired: a(x=1); missing: a(x=1, y=3), b(); extra: c(), a(x=2, z=0);'
        " argument mismatches: a(x=1, y=3) vs a(x=2, z=0): key 'x': expected 1, got 2, missing key 'y', unexpected key 'z'"
    )
    assert result.pairs == ((0, 2),)
    assert result.missing == (1, 2)
    assert result.extra == (0, 1)
    assert result.mismatches == ((1, 1, ("key 'x': expected 1, got 2", "missing key 'y'", "unexpected key 'z'")),)
    assert [call.name for call in result.expected] == ['a', 'a', 'b']
    assert [call.name for call in result.actual] == ['c', 'a', 'a']


@pytest.mark.parametrize(
    ('mode', 'actual', 'expected', 'reason'),
    [
        (
            'subset',
            [c('a'), c('b'), c('c')],
            [c('a')],
            'no match (subset, arguments exact): 2 of 3 call(s) not expected; paired: a(); extra: b(), c()',
        ),
        (
            'superset',
            [c('a')],
            [c('a'), c('b')],
            'no match (superset, arguments exact): 1 of 2 expected call(s) not made; paired: a(); missing: b()',
        ),
        # unordered says what is missing first, and lists both
        (
            'unordered',
            [c('a'), c('c')],
            [c('a'), c('b')],
            'no match (unordered, arguments exact): 1 of 2 expected call(s) not made; paired: a(); missing: b(); extra: c()',
        ),
        (
            'unordered',
            [c('a'), c('c')],
            [c('a')],
            'no match (unordered, arguments exact): 1 of 2 call(s) not expected; paired: a(); extra: c()',
        ),
        (
            'in_order',
            [c('b'), c('a')],
            [c('a'), c('b')],
            'no match (in_order, arguments exact): b() (expected call 2) is not made after the calls expected before it; paired: a(), b()',
        ),
        (
            'in_order',
            [c('b')],
            [c('a'), c('b')],
            'no match (in_order, arguments exact): 1 of 2 expected call(s) not made; paired: b(); missing: a()',
        ),
        (
            'strict',
            [c('a'), c('b')],
            [c('a')],
            'no match (strict, arguments exact): expected 1 call(s) in order, got 2; paired: a(); extra: b()',
        ),
        (
            'strict',
            [c('b'), c('a')],
            [c('a'), c('b')],
            'no match (strict, arguments exact): response 1: expected a(); got b(); paired: a(), b()',
        ),
        ('superset', [], [], 'match (superset, arguments exact): 0 expected, 0 actual call(s)'),
        ('subset', [c('a')], [], 'no match (subset, arguments exact): 1 of 1 call(s) not expected; extra: a()'),
    ],
)
def test_reasons(mode: str, actual: list[Any], expected: list[Any], reason: str) -> None:
    assert tool_call_match(actual, expected, mode=mode).reason == reason  # type: ignore[arg-type]


def test_each_section_lists_ten_calls_then_says_how_many_more() -> None:
    ten = tool_call_match([c(f't{i}') for i in range(10)], [], mode='subset').reason
    assert ten.endswith('extra: t0(), t1(), t2(), t3(), t4(), t5(), t6(), t7(), t8(), t9()')
    eleven = tool_call_match([c(f't{i}') for i in range(11)], [], mode='subset').reason
    assert eleven.endswith('extra: t0(), t1(), t2(), t3(), t4(), t5(), t6(), t7(), t8(), t9(), and 1 more')
    many = tool_call_match([c('a', x=i) for i in range(13)], [c('a', x=100 + i) for i in range(13)], mode='unordered')
    assert many.reason.count('and 3 more') == 3  # missing, extra and argument mismatches
    assert 'missing: a(x=100), ' in many.reason and 'a(x=109), and 3 more; extra: a(x=0), ' in many.reason
    assert "a(x=109) vs a(x=9): key 'x': expected 109, got 9, and 3 more" in many.reason
    assert len(many.missing) == len(many.extra) == len(many.mismatches) == 13  # the result keeps them all


def test_calls_are_shown_short() -> None:
    reason = tool_call_match([c('a', text='x' * 300, b=1)], [c('a')]).reason
    assert "a(b=1, text='" + 'x' * 50 in reason
    assert 'x' * 70 not in reason
    bad = tool_call_match([{'name': 'a', 'arguments': '{oops'}], [c('a', q=1)]).reason
    assert bad == (
        'no match (strict, arguments exact): response 1: expected a(q=1); got a(<arguments could not be parsed as JSON:'
        " the model sent '{oops'>); missing: a(q=1); extra: a(<arguments could not be parsed as JSON: the model sent"
        " '{oops'>); argument mismatches: a(q=1) vs a(<arguments could not be parsed as JSON: the model sent '{oops'>):"
        " arguments could not be parsed as JSON: the model sent '{oops'"
    )


# -- optimal pairing ---------------------------------------------------------------------------------


def greedy(actual: Sequence[Any], expected: Sequence[Any], **options: Any) -> int:
    """How many expected calls LangChain agentevals and DeepEval pair: each takes the first free
    call it matches (asked through `tool_call_match` on one call and one expectation)."""
    taken: set[int] = set()
    for want in expected:
        for i, call in enumerate(actual):
            if i not in taken and tool_call_match([call], [want], **options).value:
                taken.add(i)
                break
    return len(taken)


def test_the_issue_case_greedy_pairing_gets_wrong() -> None:
    actual = [c('a', x=1, y=2), c('a', x=1)]
    expected = [c('a', x=1), c('a', x=1, y=2)]
    options: dict[str, Any] = {'arguments': 'superset'}
    assert greedy(actual, expected, **options) == 1  # a(x=1) takes a(x=1, y=2), the only partner of the other
    result = tool_call_match(actual, expected, mode='superset', **options)
    assert result.value is True
    assert result.pairs == ((0, 1), (1, 0))
    assert result.reason == (
        'match (superset, arguments superset): 2 expected, 2 actual call(s); paired: a(x=1), a(x=1, y=2)'
    )


def test_subset_arguments_greedy_pairing_gets_wrong() -> None:
    # under subset arguments a(x=1) stands for any expectation with x=1
    actual = [c('a', x=1), c('a', x=1, y=2)]
    expected = [c('a', x=1, y=2), c('a', x=1)]
    assert greedy(actual, expected, arguments='subset') == 1
    for mode in ('unordered', 'subset', 'superset'):
        assert tool_call_match(actual, expected, mode=mode, arguments='subset').value, mode


def test_a_tolerance_that_lets_one_call_fit_two_expectations() -> None:
    rules = {'set': {'v': {'abs': 0.6}}}
    actual = [c('set', v=1.5), c('set', v=0.9)]  # 1.5 fits 1 and 2; 0.9 fits 1 only
    expected = [c('set', v=1), c('set', v=2)]
    assert greedy(actual, expected, argument_rules=rules) == 1
    result = tool_call_match(actual, expected, mode='unordered', argument_rules=rules)
    assert result.value is True
    assert result.pairs == ((0, 1), (1, 0))
    assert not tool_call_match(actual, expected, mode='in_order', argument_rules=rules).value  # 2 needs 1.5 last


def chain(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Calls v=0..n-1 and expectations v=0.5..n-1.5 then v=-0.5, each within 0.5 of its neighbours:
    first-fit pairs every expectation but the last, which frees a partner only along the whole chain."""
    actual = [c('set', v=i) for i in range(n)]
    expected = [c('set', v=i + 0.5) for i in range(n - 1)] + [c('set', v=-0.5)]
    return actual, expected


RULES = {'set': {'v': {'abs': 0.5}}}


def test_a_long_chain_needs_an_augmenting_path() -> None:
    actual, expected = chain(40)
    assert greedy(actual, expected, argument_rules=RULES) == 39
    result = tool_call_match(actual, expected, mode='unordered', argument_rules=RULES)
    assert result.value is True
    # every expectation v=i+0.5 moved up to the call v=i+1, and v=-0.5 took v=0
    assert result.pairs == (*((i, i + 1) for i in range(39)), (39, 0))
    # one call short: the chain cannot close, and exactly one expectation is missing
    short = tool_call_match(actual[1:], expected, mode='superset', argument_rules=RULES)
    assert short.value is False
    assert len(short.missing) == 1
    assert len(short.pairs) == 39


def test_augmenting_paths_are_found_without_recursion() -> None:
    actual, expected = chain(250)
    depth = 0
    frame = sys._getframe()
    while frame.f_back is not None:
        frame, depth = frame.f_back, depth + 1
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 120)  # a recursive search along the 250-call chain would need more
    try:
        result = tool_call_match(actual, expected, mode='unordered', argument_rules=RULES)
    finally:
        sys.setrecursionlimit(limit)
    assert result.value is True
    assert result.pairs[-1] == (249, 0)


def test_two_thousand_calls_of_one_tool() -> None:
    actual = [c('search', q='x')] * 2000
    assert tool_call_match(actual, [c('search', q='x', page=1)] * 2000, mode='unordered', arguments='subset').value
    assert tool_call_match(actual, [c('search', q='x', page=1)] * 1999, mode='superset', arguments='subset').value
    assert not tool_call_match(actual, [c('search', q='x', page=1)] * 2001, mode='superset', arguments='subset').value
    # the expectations that could take any call come first: first-fit gives them the calls the
    # others needed, and 300 augmenting paths put it right
    made = [c('search', q='x')] * 300 + [c('search', q='x', page=2)] * 300
    wanted = [c('search', q='x', page=2)] * 300 + [c('search', q='x')] * 300
    result = tool_call_match(made, wanted, mode='unordered', arguments='subset')
    assert result.value is True
    assert all(made[a]['arguments'] == wanted[e]['arguments'] for e, a in result.pairs)
    assert tool_call_match(made, wanted, mode='in_order', arguments='exact').value is False
    assert tool_call_match(made, wanted[::-1], mode='in_order', arguments='exact').value is True
    assert tool_call_match(made, wanted[299:301], mode='in_order', arguments='exact').value is False


# -- inputs ------------------------------------------------------------------------------------------


@dataclass
class Call:
    name: str
    arguments: dict[str, Any]


def test_expected_calls_in_every_shape() -> None:
    actual = [c('search', q='x', n=2), c('fetch', url='u')]
    shapes = [
        [{'name': 'search', 'arguments': {'q': 'x', 'n': 2}}, {'name': 'fetch', 'arguments': {'url': 'u'}}],
        [{'name': 'search', 'args': {'q': 'x', 'n': 2}}, {'name': 'fetch', 'args': {'url': 'u'}}],
        [{'name': 'search', 'arguments': '{"q": "x", "n": 2.0}'}, {'name': 'fetch', 'args': '{"url": "u"}'}],
        [{'name': 'search'}, {'name': 'fetch', 'arguments': {'url': 'u'}}],
        [Call('search', {'q': 'x', 'n': 2}), Call('fetch', {'url': 'u'})],  # objects with the attributes
        ({'name': 'search', 'arguments': {'q': 'x', 'n': 2}}, {'name': 'fetch', 'arguments': {'url': 'u'}}),
    ]
    for expected in shapes:
        assert tool_call_match(actual, expected).value is True, expected
        assert tool_call_match(actual, expected[::-1]).value is False, expected
    # the actual calls read the same shapes
    assert tool_call_match(
        [{'name': 'search', 'args': '{"q": "x", "n": 2}'}, Call('fetch', {'url': 'u'})], shapes[0]
    ).value
    # an actual call without arguments made none
    assert tool_call_match([{'name': 'ping'}], [c('ping')]).value
    assert not tool_call_match([{'name': 'ping'}], [c('ping', x=1)]).value


@pytest.mark.parametrize(
    ('expected', 'message'),
    [
        ({'name': 'a'}, "expected_calls must be a list of calls or a conversation, got {'name': 'a'}"),
        (5, 'expected_calls must be a list of calls or a conversation, got 5'),
        ([1], 'expected_calls[0]: expected a {"name": str, "arguments": dict} mapping, got 1'),
        (
            [c('a'), {'arguments': {}}],
            'expected_calls[1]: expected a {"name": str, "arguments": dict} mapping, got {\'arguments\': {}}',
        ),
        ([{'name': ''}], 'expected_calls[0]: expected a {"name": str, "arguments": dict} mapping'),
        ([{'name': 'a', 'arguments': [1]}], "expected_calls[0] ('a'): arguments must be a mapping, got [1]"),
        ([{'name': 'a', 'arguments': '[1]'}], "expected_calls[0] ('a'): arguments are not a JSON object: [1]"),
        ([{'name': 'a', 'arguments': '{oops'}], "expected_calls[0] ('a'): arguments could not be parsed as JSON"),
        ([[c('a')], c('b')], 'expected_calls must hold calls, or be a list of turns each a list of calls; not a mix'),
        (
            [[c('a')], [{'name': 'b', 'arguments': 3}]],
            "turn 2: expected_calls[0] ('b'): arguments must be a mapping, got 3",
        ),
        ('not json', 'expected_calls is not a list of calls or a conversation: '),
        (
            [{'role': 'user', 'content': 'x'}, {'name': 'a'}],
            'expected_calls is not a list of calls or a conversation: ',
        ),
        (
            [
                {'role': 'user', 'content': 'x'},
                {
                    'role': 'assistant',
                    'tool_calls': [{'id': '1', 'type': 'function', 'function': {'name': 'a', 'arguments': '{oops'}}],
                },
            ],
            "expected_calls call 0 ('a'): arguments could not be parsed as JSON",
        ),
    ],
)
def test_bad_expected_calls_are_errors_naming_the_item(expected: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        tool_call_match([], expected)
    assert str(raised.value).startswith(message)


def test_bad_actual_inputs() -> None:
    with pytest.raises(TypeError, match=r'^expected a Trajectory, a conversation or a list of calls, got dict$'):
        tool_call_match({'name': 'a'}, [])  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r'^actual\[0\]: expected a \{"name": str, "arguments": dict\} mapping, got 3$'
    ):
        tool_call_match([3], [])
    with pytest.raises(
        TypeError, match=r'^expected calls per turn need a Trajectory or a conversation, not a list of calls$'
    ):
        tool_call_match([c('a')], [[c('a')]])
    with pytest.raises(
        ValueError,
        match=r"^mode must be one of 'strict', 'unordered', 'subset', 'superset', 'in_order'; got 'any_order'$",
    ):
        tool_call_match([], [], mode='any_order')  # type: ignore[arg-type]


# conversations in each format: responses, each a list of (name, arguments); a final answer closes them


def openai_chat(
    responses: Sequence[Sequence[tuple[str, dict[str, Any]]]], *, final: bool = True
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{'role': 'system', 'content': 'be brief'}, {'role': 'user', 'content': 'go'}]
    ids = iter(range(1000))
    for calls in responses:
        issued = [(str(next(ids)), name, args) for name, args in calls]
        messages.append(
            {
                'role': 'assistant',
                'content': None if issued else 'thinking',
                'tool_calls': [
                    {'id': i, 'type': 'function', 'function': {'name': name, 'arguments': json.dumps(args)}}
                    for i, name, args in issued
                ],
            }
        )
        messages += [{'role': 'tool', 'tool_call_id': i, 'content': 'ok'} for i, *_ in issued]
    if final:
        messages.append({'role': 'assistant', 'content': 'done'})
    return messages


def ragas(responses: Sequence[Sequence[tuple[str, dict[str, Any]]]], *, final: bool = True) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{'type': 'human', 'content': 'go'}]
    for calls in responses:
        messages.append({'type': 'ai', 'content': '', 'tool_calls': [{'name': n, 'args': a} for n, a in calls]})
        messages += [{'type': 'tool', 'content': 'ok'} for _ in calls]
    if final:
        messages.append({'type': 'ai', 'content': 'done'})
    return messages


def pydantic_ai(responses: Sequence[Sequence[tuple[str, dict[str, Any]]]], *, final: bool = True) -> list[Any]:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart

    messages: list[Any] = [ModelRequest(parts=[UserPromptPart('go')])]
    ids = iter(range(1000))
    for calls in responses:
        issued = [(f'c{next(ids)}', name, args) for name, args in calls]
        messages.append(
            ModelResponse(
                parts=[ToolCallPart(name, args, tool_call_id=i) for i, name, args in issued] or [TextPart('hm')]
            )
        )
        if issued:
            messages.append(ModelRequest(parts=[ToolReturnPart(name, 'ok', tool_call_id=i) for i, name, _ in issued]))
    if final:
        messages.append(ModelResponse(parts=[TextPart('done')]))
    return messages


FORMATS = {'openai': openai_chat, 'ragas': ragas, 'pydantic-ai': pydantic_ai}
RESPONSES = [[('lookup', {'id': 'A1'})], [('refund', {'id': 'A1', 'amount': 12}), ('notify', {'to': 'ann'})]]
SAME_RESPONSES_OTHER_ORDER = [
    [('lookup', {'id': 'A1'})],
    [('notify', {'to': 'ann'}), ('refund', {'id': 'A1', 'amount': 12})],
]
CALLS = [c('lookup', id='A1'), c('refund', id='A1', amount=12), c('notify', to='ann')]


@pytest.mark.parametrize('form', list(FORMATS))
def test_a_conversation_as_the_expectation(form: str) -> None:
    build = FORMATS[form]
    expected = build(RESPONSES)
    assert tool_call_match(CALLS, expected).reason == (
        "match (strict, arguments exact): 3 expected, 3 actual call(s); paired: lookup(id='A1'), refund(amount=12,"
        " id='A1'), notify(to='ann')"
    )
    assert tool_call_match(build(SAME_RESPONSES_OTHER_ORDER), expected).value is True
    assert tool_call_match(CALLS[::-1], expected, mode='unordered').value is True
    assert tool_call_match(CALLS[::-1], expected).value is False
    assert tool_call_match(CALLS[:2], expected, mode='subset').value is True
    assert tool_call_match(CALLS[:2], expected, mode='superset').value is False
    # as JSON text too
    if form != 'pydantic-ai':
        assert tool_call_match(CALLS, json.dumps(expected)).value is True
    # and as the actual side, in every format, scored against every other
    for other in FORMATS.values():
        assert tool_call_match(other(RESPONSES), expected).value is True
        assert tool_call_match(other(SAME_RESPONSES_OTHER_ORDER), expected).value is True
        assert tool_call_match(other([RESPONSES[1], RESPONSES[0]]), expected).value is False


def test_the_actual_side_as_a_trajectory_a_conversation_or_a_list_of_calls() -> None:
    b = TreeBuilder(generic=True)
    root = b.agent('main')
    b.chat(root, issued=['1'])
    b.tool('lookup', root, arguments={'id': 'A1'}, call_id='1')
    b.chat(root, issued=['2', '3'])
    b.tool('notify', root, arguments={'to': 'ann'}, call_id='3')
    b.tool('refund', root, arguments={'id': 'A1', 'amount': 12}, call_id='2')
    b.chat(root)
    from_spans = extract_trajectory(b.build())
    expected = openai_chat(RESPONSES)
    assert isinstance(from_spans, Trajectory)
    # the spans record notify before refund, both issued by one response: the response's order wins
    for actual, in_order in (
        (from_spans, True),
        (trajectory_from_messages(ragas(RESPONSES)), True),
        (ragas(RESPONSES), True),
        (CALLS, True),
    ):
        results = [tool_call_match(actual, expected, mode=mode) for mode in MODES]
        assert [r.value for r in results] == [True, True, True, True, in_order], actual
        assert [len(r.pairs) for r in results] == [3] * 5


# -- strict: model responses -------------------------------------------------------------------------


def test_strict_compares_responses_in_order_and_the_calls_of_one_response_as_a_multiset() -> None:
    expected = openai_chat([[('a', {})], [('b', {}), ('b', {}), ('c', {})]])
    assert tool_call_match(openai_chat([[('a', {})], [('c', {}), ('b', {}), ('b', {})]]), expected).value
    assert tool_call_match(openai_chat([[('a', {})], [('b', {}), ('c', {}), ('c', {})]]), expected).reason == (
        'no match (strict, arguments exact): response 2: expected b(), b(), c(); got b(), c(), c(); paired: a(), b(),'
        ' c(); missing: b(); extra: c()'
    )
    # the same calls cut into responses differently
    assert tool_call_match(openai_chat([[('a', {}), ('b', {})], [('b', {}), ('c', {})]]), expected).reason == (
        'no match (strict, arguments exact): response 1: expected a(); got a(), b(); paired: a(), b(), b(), c()'
    )
    # responses swapped
    swapped = openai_chat([[('b', {}), ('b', {}), ('c', {})], [('a', {})]])
    assert tool_call_match(swapped, expected).reason.startswith(
        'no match (strict, arguments exact): response 1: expected a(); got b(), b(), c();'
    )
    # every unordered mode is content with either
    assert tool_call_match(swapped, expected, mode='unordered').value


def test_strict_counts_responses_that_issued_nothing() -> None:
    expected = openai_chat([[('a', {})], [], [('b', {})]])  # the model thought aloud once between the calls
    assert tool_call_match(openai_chat([[('a', {})], [], [('b', {})]]), expected).value
    assert tool_call_match(openai_chat([[('a', {})], [('b', {})]]), expected).reason == (
        'no match (strict, arguments exact): expected 4 model response(s), got 3; paired: a(), b()'
    )
    # the final answer is a response too
    assert tool_call_match(openai_chat([[('a', {})], [], [('b', {})]], final=False), expected).reason == (
        'no match (strict, arguments exact): expected 4 model response(s), got 3; paired: a(), b()'
    )
    assert tool_call_match(openai_chat([[('a', {})], [('b', {})], []]), expected).reason == (
        'no match (strict, arguments exact): response 2: expected no calls; got b(); paired: a(), b()'
    )


def test_strict_against_a_flat_list_cuts_it_at_the_responses_that_issued_calls() -> None:
    actual = openai_chat([[('a', {})], [], [('b', {}), ('c', {})]])
    assert tool_call_match(actual, [c('a'), c('b'), c('c')]).value
    assert tool_call_match(actual, [c('a'), c('c'), c('b')]).value
    assert tool_call_match(actual, [c('b'), c('a'), c('c')]).reason == (
        'no match (strict, arguments exact): response 1: expected b(); got a(); paired: b(), a(), c()'
    )
    assert tool_call_match(actual, [c('a'), c('b')]).reason == (
        'no match (strict, arguments exact): expected 2 call(s) in order, got 3; paired: a(), b(); extra: c()'
    )
    # the other way round: a flat list of calls against a conversation
    assert tool_call_match([c('a'), c('c'), c('b')], actual).value
    assert not tool_call_match([c('c'), c('a'), c('b')], actual).value
    # both flat: every call is its own response
    assert not tool_call_match([c('a'), c('c'), c('b')], [c('a'), c('b'), c('c')]).value


def test_strict_on_spans_without_model_requests_compares_the_calls_in_order() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    for name in ('a', 'b', 'c'):
        b.tool(name, root, arguments={})
    trajectory = extract_trajectory(b.build())
    assert trajectory.model_requests == ()
    assert tool_call_match(trajectory, [c('a'), c('b'), c('c')]).value
    assert not tool_call_match(trajectory, [c('a'), c('c'), c('b')]).value
    # against a conversation: cut to its responses
    assert tool_call_match(trajectory, openai_chat([[('a', {})], [('c', {}), ('b', {})]])).value
    assert not tool_call_match(trajectory, openai_chat([[('a', {}), ('c', {})], [('b', {})]])).value


# -- properties --------------------------------------------------------------------------------------

# Small alphabets and integer values (so `==` is the JSON comparison). Expectations are mostly made
# from the actual calls (kept, reordered, loosened, nudged, dropped or repeated), so that near
# misses, and the pairings first-fit gets wrong, come up often.
argument_dicts = st.dictionaries(st.sampled_from('xy'), st.integers(0, 1), max_size=2)
call_strategy = st.builds(lambda name, args: {'name': name, 'arguments': args}, st.sampled_from('aab'), argument_dicts)
EDITS = ('keep', 'keep', 'drop', 'twice', 'key dropped', 'key added', 'nudged', 'renamed', 'any')


@st.composite
def related(draw: st.DrawFn, *, any_arguments: bool = True, size: int = 5) -> tuple[list[Any], list[Any]]:
    """(actual calls, expected calls) with much in common."""
    actual = draw(st.lists(call_strategy, max_size=size))
    order = draw(st.permutations(actual)) if draw(st.booleans()) else actual
    expected: list[Any] = []
    for call in order:
        edit = draw(st.sampled_from(EDITS if any_arguments else EDITS[:-1]))
        args = dict(call['arguments'])
        if edit == 'drop':
            continue
        if edit == 'key dropped' and args:
            del args[draw(st.sampled_from(sorted(args)))]
        elif edit == 'key added':
            args[draw(st.sampled_from('xyz'))] = draw(st.integers(0, 2))
        elif edit == 'nudged' and args:
            key = draw(st.sampled_from(sorted(args)))
            args[key] += draw(st.sampled_from([-1, 1]))
        want = {'name': 'b' if edit == 'renamed' else call['name'], 'arguments': None if edit == 'any' else args}
        expected += [want, want] if edit == 'twice' else [want]
    for call in draw(st.lists(call_strategy, max_size=2)):  # expected, never made
        expected.insert(draw(st.integers(0, len(expected))), call)
    actual = list(actual)
    for call in draw(st.lists(call_strategy, max_size=2)):  # made, never expected
        actual.insert(draw(st.integers(0, len(actual))), call)
    return actual[: size + 1], expected[: size + 1]


# First-fit traps: a loose expectation first takes the call a later, tight one needs, while another
# call could serve it: (made first, made later, loose expectation, tight expectation). Each bites
# under some argument mode (or the tolerance), and is harmless under the others.
TRAPS: dict[str, tuple[dict[str, int], dict[str, int], dict[str, int] | None, dict[str, int]]] = {
    'superset': ({'x': 0, 'y': 1}, {'x': 0}, {'x': 0}, {'x': 0, 'y': 1}),
    'subset': ({'x': 0}, {'y': 1}, {'x': 0, 'y': 1}, {'x': 0}),
    'tolerance': ({'x': 0}, {'x': 2}, {'x': 1}, {'x': -1}),
    'any': ({'x': 0}, {'y': 1}, None, {'x': 0}),
}


@st.composite
def trapped(draw: st.DrawFn, *, any_arguments: bool = True) -> tuple[list[Any], list[Any]]:
    """A related pair with a first-fit trap laid into it, each side's two calls in their order."""
    actual, expected = draw(related(size=3, any_arguments=any_arguments))
    kinds = [kind for kind in TRAPS if any_arguments or kind != 'any']
    first, later, loose, tight = TRAPS[draw(st.sampled_from(kinds))]
    name = draw(st.sampled_from('ab'))

    def lay(calls: list[Any], one: dict[str, int] | None, two: dict[str, int]) -> list[Any]:
        i = draw(st.integers(0, len(calls)))
        j = draw(st.integers(i, len(calls)))
        return [*calls[:i], {'name': name, 'arguments': one}, *calls[i:j], {'name': name, 'arguments': two}, *calls[j:]]

    return lay(actual, first, later), lay(expected, loose, tight)


def pairs(*, any_arguments: bool = True) -> st.SearchStrategy[tuple[list[Any], list[Any]]]:
    return st.one_of(related(any_arguments=any_arguments), trapped(any_arguments=any_arguments))


argument_modes = st.sampled_from(ARGUMENT_MODES)
tolerance = st.booleans()
TOLERANCE = {'*': {'x': {'abs': 1}}}


def oracle_compatible(call: dict[str, Any], want: dict[str, Any], arguments: str, tolerant: bool) -> bool:
    """One call against one expectation, written out from the documented rules."""
    if call['name'] != want['name']:
        return False
    made, wanted = call['arguments'], want['arguments']
    if wanted is None or arguments == 'ignore':
        return True

    def equal(key: str, a: int, e: int) -> bool:
        return abs(a - e) <= 1 if tolerant and key == 'x' else a == e

    if arguments == 'exact':
        return made.keys() == wanted.keys() and all(equal(k, made[k], wanted[k]) for k in made)
    if arguments == 'subset':
        return all(k in wanted and equal(k, v, wanted[k]) for k, v in made.items())
    return all(k in made and equal(k, made[k], v) for k, v in wanted.items())  # superset


def oracle(actual: list[Any], expected: list[Any], mode: str, arguments: str, tolerant: bool) -> bool:
    """Every pairing tried: the verdict for flat lists of calls."""

    def ok(i: int, j: int) -> bool:
        return oracle_compatible(actual[i], expected[j], arguments, tolerant)

    n, m = len(actual), len(expected)
    if mode == 'strict':
        return n == m and all(ok(i, i) for i in range(n))
    if mode == 'unordered':
        return n == m and any(all(ok(p[j], j) for j in range(m)) for p in permutations(range(n)))
    if mode == 'superset':
        return any(all(ok(p[j], j) for j in range(m)) for p in permutations(range(n), m))
    if mode == 'subset':
        return any(all(ok(i, p[i]) for i in range(n)) for p in permutations(range(m), n))
    return any(all(ok(chosen[j], j) for j in range(m)) for chosen in combinations(range(n), m))  # in_order


def oracle_maximum(actual: list[Any], expected: list[Any], arguments: str, tolerant: bool) -> int:
    """The size of a maximum pairing, by trying every one."""

    def best(j: int, used: frozenset[int]) -> int:
        if j == len(expected):
            return 0
        found = best(j + 1, used)
        for i in range(len(actual)):
            if i not in used and oracle_compatible(actual[i], expected[j], arguments, tolerant):
                found = max(found, 1 + best(j + 1, used | {i}))
        return found

    return best(0, frozenset())


def options(arguments: str, tolerant: bool) -> dict[str, Any]:
    return {'arguments': arguments, 'argument_rules': TOLERANCE if tolerant else None}


def verdict(actual: Any, expected: Any, mode: str, arguments: str, tolerant: bool = False) -> bool:
    return tool_call_match(actual, expected, mode=mode, **options(arguments, tolerant)).value  # type: ignore[arg-type, return-value]


def test_the_strategy_finds_what_first_fit_gets_wrong() -> None:
    """The generated pairs include cases greedy pairing fails (else the oracle tests could miss them)."""
    found = []

    @given(pairs(), argument_modes, tolerance)
    def look(pair: tuple[list[Any], list[Any]], arguments: str, tolerant: bool) -> None:
        actual, expected = pair
        if greedy(actual, expected, **options(arguments, tolerant)) < oracle_maximum(
            actual, expected, arguments, tolerant
        ):
            found.append(pair)

    look()
    assert found


@given(pairs(), argument_modes, tolerance)
def test_every_mode_equals_the_brute_force_oracle(
    pair: tuple[list[Any], list[Any]], arguments: str, tolerant: bool
) -> None:
    actual, expected = pair
    for mode in MODES:
        assert verdict(actual, expected, mode, arguments, tolerant) is oracle(
            actual, expected, mode, arguments, tolerant
        ), mode


@given(pairs(), argument_modes, tolerance)
def test_the_pairing_is_a_maximum_pairing_of_compatible_calls(
    pair: tuple[list[Any], list[Any]], arguments: str, tolerant: bool
) -> None:
    actual, expected = pair
    result = tool_call_match(actual, expected, mode='unordered', **options(arguments, tolerant))
    assert len({e for e, _ in result.pairs}) == len({a for _, a in result.pairs}) == len(result.pairs)
    assert all(oracle_compatible(actual[a], expected[e], arguments, tolerant) for e, a in result.pairs)
    assert len(result.pairs) == oracle_maximum(actual, expected, arguments, tolerant)
    assert sorted([*(e for e, _ in result.pairs), *result.missing]) == list(range(len(expected)))
    assert sorted([*(a for _, a in result.pairs), *result.extra]) == list(range(len(actual)))


@given(pairs(), argument_modes, tolerance, st.randoms(use_true_random=False))
def test_unordered_modes_never_depend_on_the_order_of_either_side(
    pair: tuple[list[Any], list[Any]], arguments: str, tolerant: bool, rng: random.Random
) -> None:
    actual, expected = pair
    shuffled_actual, shuffled_expected = rng.sample(actual, len(actual)), rng.sample(expected, len(expected))
    for mode in ('unordered', 'subset', 'superset'):
        value = verdict(actual, expected, mode, arguments, tolerant)
        for a, e in ((shuffled_actual, expected), (actual, shuffled_expected), (shuffled_actual, shuffled_expected)):
            assert verdict(a, e, mode, arguments, tolerant) is value, mode


@st.composite
def related_responses(draw: st.DrawFn) -> tuple[list[list[Any]], list[list[Any]]]:
    """Model responses (lists of calls) on both sides, the expected ones mostly made from the actual."""
    actual = draw(st.lists(st.lists(call_strategy, max_size=3), max_size=3))
    expected = []
    for group in actual:
        edit = draw(st.sampled_from(['keep', 'keep', 'keep', 'shuffled', 'one changed', 'drop', 'empty before']))
        if edit == 'drop':
            continue
        if edit == 'empty before':
            expected.append([])
        copy = [dict(call) for call in group]
        if edit == 'shuffled':
            copy = draw(st.permutations(copy))
        elif edit == 'one changed' and copy:
            copy[draw(st.integers(0, len(copy) - 1))] = draw(call_strategy)
        expected.append(list(copy))
    return actual, expected


def as_responses(groups: list[list[dict[str, Any]]]) -> list[list[tuple[str, dict[str, Any]]]]:
    return [[(call['name'], call['arguments']) for call in group] for group in groups]


@given(related_responses(), argument_modes, st.randoms(use_true_random=False))
def test_strict_never_depends_on_the_order_within_a_response(
    pair: tuple[list[list[Any]], list[list[Any]]], arguments: str, rng: random.Random
) -> None:
    actual, expected = pair

    def shuffled(groups: list[list[Any]]) -> list[list[Any]]:
        return [rng.sample(group, len(group)) for group in groups]

    value = verdict(openai_chat(as_responses(actual)), ragas(as_responses(expected)), 'strict', arguments)
    for a, e in ((shuffled(actual), expected), (actual, shuffled(expected))):
        assert verdict(openai_chat(as_responses(a)), ragas(as_responses(e)), 'strict', arguments) is value
    # against the flat list of the expected calls, too
    flat = [call for group in expected for call in group]
    value = verdict(openai_chat(as_responses(actual)), flat, 'strict', arguments)
    assert verdict(openai_chat(as_responses(shuffled(actual))), flat, 'strict', arguments) is value


@given(related_responses(), argument_modes)
def test_strict_on_responses_equals_the_oracle(pair: tuple[list[list[Any]], list[list[Any]]], arguments: str) -> None:
    actual, expected = pair
    value = verdict(openai_chat(as_responses(actual)), openai_chat(as_responses(expected)), 'strict', arguments)
    # a response matches a response when its calls pair one to one; the final answers match
    assert value is (
        len(actual) == len(expected)
        and all(oracle(a, e, 'unordered', arguments, False) for a, e in zip(actual, expected, strict=True))
    )


noise = st.lists(st.builds(lambda name: c(name), st.sampled_from('pq')), max_size=3)


@given(pairs(), argument_modes, noise, st.randoms(use_true_random=False))
def test_in_order_never_depends_on_calls_no_expected_call_can_pair_with(
    pair: tuple[list[Any], list[Any]], arguments: str, extra: list[Any], rng: random.Random
) -> None:
    """Calls of tools nobody expected can sit anywhere: in_order reads the order of the others only."""
    actual, expected = pair
    value = verdict(actual, expected, 'in_order', arguments)
    noisy = list(actual)
    for call in extra:
        noisy.insert(rng.randint(0, len(noisy)), call)
    assert verdict(noisy, expected, 'in_order', arguments) is value


@given(pairs(), argument_modes, st.lists(call_strategy, max_size=3), st.randoms(use_true_random=False))
def test_in_order_survives_any_calls_inserted_anywhere(
    pair: tuple[list[Any], list[Any]], arguments: str, inserted: list[Any], rng: random.Random
) -> None:
    actual, expected = pair
    if not verdict(actual, expected, 'in_order', arguments):
        return
    more = list(actual)
    for call in inserted:
        more.insert(rng.randint(0, len(more)), call)
    assert verdict(more, expected, 'in_order', arguments) is True


SWAPPED = {'exact': 'exact', 'subset': 'superset', 'superset': 'subset', 'ignore': 'ignore'}


@given(pairs(any_arguments=False), argument_modes, tolerance)
def test_superset_and_subset_swap_when_the_sides_swap(
    pair: tuple[list[Any], list[Any]], arguments: str, tolerant: bool
) -> None:
    actual, expected = pair
    swapped = SWAPPED[arguments]
    assert verdict(actual, expected, 'superset', arguments, tolerant) is verdict(
        expected, actual, 'subset', swapped, tolerant
    )
    assert verdict(actual, expected, 'subset', arguments, tolerant) is verdict(
        expected, actual, 'superset', swapped, tolerant
    )
    for mode in ('unordered', 'strict'):
        assert verdict(actual, expected, mode, arguments, tolerant) is verdict(
            expected, actual, mode, swapped, tolerant
        )


@given(pairs(), argument_modes, tolerance)
def test_how_the_modes_imply_each_other(pair: tuple[list[Any], list[Any]], arguments: str, tolerant: bool) -> None:
    actual, expected = pair
    value = {mode: verdict(actual, expected, mode, arguments, tolerant) for mode in MODES}
    assert value['unordered'] is (value['subset'] and value['superset'])
    assert not value['in_order'] or value['superset']
    assert not value['strict'] or value['unordered']  # flat lists
    assert not value['strict'] or value['in_order']


def test_langchain_tool_call_dicts_are_calls_not_messages() -> None:
    """`AIMessage.tool_calls` items carry `type: 'tool_call'`; they are calls (with `args`), not ragas messages."""
    made = [{'name': 'search', 'args': {'q': 'x'}, 'id': 'call_1', 'type': 'tool_call'}]
    result = tool_call_match(made, [{'name': 'search', 'args': {'q': 'x'}, 'id': 'call_9', 'type': 'tool_call'}])
    assert result.value is True
    assert tool_call_match(made, [{'name': 'search', 'args': {'q': 'y'}, 'type': 'tool_call'}]).value is False


def test_in_order_reports_the_pairing_that_keeps_the_order() -> None:
    made = [{'name': 'a', 'arguments': {'x': 1}}, {'name': 'b', 'arguments': {}}, {'name': 'a', 'arguments': {'x': 1}}]
    result = tool_call_match(made, [{'name': 'b'}, {'name': 'a'}], mode='in_order')
    assert result.value is True
    assert result.pairs == ((0, 1), (1, 2))  # the a after b, not the first a
    assert result.extra == (0,)
    assert result.reason.endswith('; extra: a(x=1)')


def test_a_misspelt_key_in_an_expected_call_is_an_error_not_any_arguments() -> None:
    with pytest.raises(ValueError, match=r"expected_calls\[0\] \('refund'\): unknown key\(s\) 'argument'"):
        tool_call_match(
            [{'name': 'refund', 'arguments': {'amount': 99}}], [{'name': 'refund', 'argument': {'amount': 12}}]
        )
