"""Matching a case to its trace by the first user message, after the case name, file and trace id rules."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from pydantic import BaseModel
from pydantic_evals import Case
from pydantic_evals.otel import SpanTree

from agentic_evals import read_traces
from agentic_evals.offline.matching import (
    AmbiguousTraceError,
    TraceMatcher,
    case_input_text,
    first_user_message,
    match_traces,
)

from ..factories import TreeBuilder
from . import CHATS


@dataclass(frozen=True)
class Trace:
    trace_id: str
    tree: SpanTree
    name: str


def asked(prompt: str, *, trace_id: int, name: str = 'prod') -> Trace:
    """A run whose model request recorded `prompt` as the user's message (GenAI conventions)."""
    b = TreeBuilder(trace_id=trace_id)
    agent = b.agent('support')
    messages = [{'role': 'user', 'parts': [{'type': 'text', 'content': prompt}]}]
    b.chat(agent, **{'gen_ai.input.messages': json.dumps(messages)})
    return Trace(f'{trace_id:032x}', b.build(), name)


def test_a_case_finds_the_trace_asked_the_same_thing() -> None:
    traces = [asked('Where is order B200?', trace_id=1), asked('Where is\n  order A100? ', trace_id=2)]
    cases = [Case(name='a100', inputs='Where is order  A100?'), Case(name='b200', inputs='Where is order B200?')]
    matches = match_traces(cases, traces)
    # runs of whitespace count as one space, the ends are stripped
    assert [(m.case.name, m.trace, m.why) for m in matches] == [
        ('a100', traces[1], 'first user message'),
        ('b200', traces[0], 'first user message'),
    ]


def test_the_comparison_keeps_case_and_punctuation() -> None:
    [match] = match_traces([Case(name='c', inputs='where is order a100')], [asked('Where is order A100?', trace_id=1)])
    assert match.trace is None
    assert match.why.endswith(", no trace whose first user message is 'where is order a100'")


def test_the_input_rule_comes_after_the_other_three() -> None:
    by_input = asked('hello', trace_id=1, name='other')
    by_file = asked('something else', trace_id=2, name='greeting')
    [match] = match_traces([Case(name='greeting', inputs='hello')], [by_input, by_file])
    assert (match.trace, match.why) == (by_file, 'file name')
    by_id = asked('bye', trace_id=3)
    case = Case(name='x', inputs='hello', metadata={'trace_id': f'{3:032x}'})
    [match] = match_traces([case], [by_input, by_id])
    assert (match.trace, match.why) == (by_id, 'metadata trace_id')


def test_two_traces_with_the_same_first_message_are_ambiguous() -> None:
    traces = [asked('hello', trace_id=1), asked(' hello ', trace_id=2)]
    with pytest.raises(AmbiguousTraceError) as raised:
        match_traces([Case(name='greeting', inputs='hello')], traces)
    assert str(raised.value) == (
        f"case 'greeting' matches 2 traces by first user message: prod ({1:032x}), prod ({2:032x})"
    )
    assert raised.value.rules == frozenset({'first user message'})


def test_a_stronger_rule_is_not_ambiguous_because_of_weaker_matches() -> None:
    # once the file rule found the case's trace, traces with the same prompt are not kept for it
    matcher = TraceMatcher([Case(name='greeting', inputs='hello')])
    for trace_id in range(1, 4):
        assert matcher.offer(asked('hello', trace_id=trace_id))
    by_file = asked('hello', trace_id=9, name='greeting')
    matcher.offer(by_file)
    matcher.offer(asked('hello', trace_id=10))
    [match] = matcher.matches()
    assert (match.trace, match.why) == (by_file, 'file name')
    assert [(f.rank, f.trace_id, f.count) for f in matcher.plan._found.values()] == [(1, by_file.trace_id, 1)]
    assert list(matcher._kept.values()) == [by_file]


def test_many_traces_asked_the_same_thing_are_counted_not_kept() -> None:
    matcher = TraceMatcher([Case(name='greeting', inputs='hello')])
    for trace_id in range(1, 1001):
        matcher.offer(asked('hello', trace_id=trace_id))
    [found] = matcher.plan._found.values()
    assert (len(found.labels), found.count) == (5, 1000)
    assert len(matcher._kept) == 1  # the first trace only: the rest are counted
    with pytest.raises(AmbiguousTraceError) as raised:
        matcher.matches()
    listed = ', '.join(f'prod ({i:032x})' for i in range(1, 6))
    assert str(raised.value) == f"case 'greeting' matches 1000 traces by first user message: {listed}, and 995 more"


def test_two_cases_asking_the_same_thing_share_the_trace() -> None:
    trace = asked('hello', trace_id=1)
    matches = match_traces([Case(name='a', inputs='hello'), Case(name='b', inputs='hello')], [trace])
    assert [m.trace for m in matches] == [trace, trace]


class Question(BaseModel):
    question: str


class TwoFields(BaseModel):
    question: str
    locale: str


@dataclass
class Asked:
    text: str


@pytest.mark.parametrize(
    ('inputs', 'text'),
    [
        ('hello', 'hello'),
        ({'question': 'hello'}, 'hello'),
        (Question(question='hello'), 'hello'),
        (Asked('hello'), 'hello'),
        ({'question': 'hello', 'locale': 'en'}, None),
        (TwoFields(question='hello', locale='en'), None),
        ({'count': 3}, None),
        (['hello'], None),
        (None, None),
        (42, None),
    ],
)
def test_which_inputs_are_text(inputs: object, text: str | None) -> None:
    assert case_input_text(inputs) == text


def test_inputs_that_are_not_text_never_match_and_say_so() -> None:
    [match] = match_traces([Case(name='c', inputs={'n': 1})], [asked('hello', trace_id=1)])
    assert match.trace is None
    assert match.why.endswith(', no trace_id in the metadata, no text inputs to match a first user message')


def test_a_long_input_is_shortened_in_the_reason() -> None:
    [match] = match_traces([Case(name='c', inputs='word ' * 40)], [asked('hello', trace_id=1)])
    assert match.why.endswith(", no trace whose first user message is '" + ('word ' * 16)[:77] + "...'")


def test_the_first_user_message_of_real_traces() -> None:
    # pydantic-ai's agent span holds the whole history: a later turn's first message is the chat's first
    prompts = [first_user_message(t.tree) for t in read_traces(CHATS)]
    assert prompts == [
        'Where is order A100?',
        'Has order B200 shipped?',
        'Where is order A100?',
        'How long does shipping to Norway take?',
        'Has order B200 shipped?',
    ]
    assert first_user_message(SpanTree()) is None


def test_a_real_trace_found_by_its_first_message() -> None:
    traces = read_traces(CHATS)
    [match] = match_traces([Case(name='faq', inputs='How long does shipping to Norway take?')], traces)
    assert match.trace is not None and match.trace.trace_id.endswith('4')
    assert match.why == 'first user message'
