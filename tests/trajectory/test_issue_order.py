"""Issuers and issue order when tool spans hang under their model span, and when records are read one by one."""

from __future__ import annotations

import json
from datetime import timedelta

from agentic_evals import extract_trajectory

from ..factories import TreeBuilder


def test_calls_under_their_model_span_are_issued_by_it() -> None:
    """No request shares the calls' parent, so each call's id finds the response that issued it."""
    b = TreeBuilder()
    main = b.agent('main')
    first = b.chat(main, issued=['c1', 'c2', 'c3'])
    # the validation failure starts before the calls the model issued ahead of it
    b.tool('c', first, call_id='c3', status='error', **{'pydantic_ai.tool.failure_stage': 'validation'})
    b.tool('a', first, call_id='c1')
    b.tool('b', first, call_id='c2')
    second = b.chat(main, issued=['c4'])
    b.tool('d', second, call_id='c4')
    b.tool('e', second)  # no id: no issuer
    t = extract_trajectory(b.build())
    assert [(c.name, c.issued_by) for c in t.tool_calls] == [('a', 0), ('b', 0), ('c', 0), ('d', 1), ('e', None)]


def test_one_record_finds_its_issuer_without_the_others() -> None:
    b = TreeBuilder()
    main = b.agent('main')
    for i in range(40):
        chat = b.chat(main, issued=[f'id{i}'])
        b.tool('t', chat, call_id=f'id{i}')
    t = extract_trajectory(b.build())
    assert t.calls()[-1].issued_by == 39
    assert t.calls()[5].issued_by == 5
    # past a few look-ups the requests are indexed: the answers stay the same
    assert [c.issued_by for c in t.tool_calls] == list(range(40))


def test_siblings_use_the_latest_request_of_their_parent() -> None:
    b = TreeBuilder()
    main = b.agent('main')
    b.chat(main)
    b.tool('a', main)
    sub = b.agent('sub', b.tool('ask', main))
    b.chat(sub)
    b.tool('b', sub)
    b.tool('c', main)  # still the main run's first response: the sub-agent's request is not its parent's
    t = extract_trajectory(b.build())
    assert [(c.name, c.issued_by) for c in t.tool_calls] == [('a', 0), ('ask', 0), ('b', 1), ('c', 0)]


def test_an_id_quoted_in_text_is_not_an_issued_call() -> None:
    """The ids are searched for in the responses' raw text; only tool-call parts count."""
    import json

    b = TreeBuilder()
    main = b.agent('main')
    mention = [{'role': 'assistant', 'parts': [{'type': 'text', 'content': 'see "c1"'}]}]
    b.chat(main, **{'gen_ai.output.messages': json.dumps(mention)})
    issuing = b.chat(main, issued=['c1', 'odd"id'])
    b.tool('a', issuing, call_id='c1')
    b.tool('b', issuing, call_id='odd"id')  # JSON escapes the quote: the text is parsed instead
    t = extract_trajectory(b.build())
    assert [(c.name, c.issued_by) for c in t.tool_calls] == [('a', 1), ('b', 1)]


def test_the_response_a_call_hangs_under_issued_it() -> None:
    """Even when an earlier response holds the same id (a broken trace): the nesting says who issued it."""
    b = TreeBuilder()
    main = b.agent('main')
    b.chat(main, issued=['dup'])
    under = b.chat(main, issued=['dup'])
    b.tool('a', under, call_id='dup')
    b.tool('b', main, call_id='dup')  # beside the responses: the latest of its own run's
    orphan = b.span('step', main)
    b.tool('c', orphan, call_id='dup')  # under no response: the first that issued the id
    t = extract_trajectory(b.build())
    assert [(c.name, c.issued_by) for c in t.tool_calls] == [('a', 1), ('b', 1), ('c', 0)]


def test_a_call_without_an_id_gets_it_from_the_response_that_issued_it() -> None:
    """Its place among that response's calls of its name is its place among the issued ones."""
    b = TreeBuilder()
    run = b.agent('main')
    parts = [
        {'type': 'tool_call', 'id': i, 'name': n, 'arguments': {}} for i, n in [('a1', 'a'), ('b1', 'b'), ('a2', 'a')]
    ]
    b.chat(run, **{'gen_ai.output.messages': json.dumps([{'role': 'assistant', 'parts': parts}])})
    b.tool('a', run)
    b.tool('b', run)
    b.tool('a', run)
    b.tool('a', run)  # the response issued two calls of `a`: a third has no id to recover
    b.chat(run)
    b.tool('b', run)  # issued by a response that lists nothing
    b.tool('c', run, call_id='own')  # an id on the span is its own

    calls = extract_trajectory(b.build()).tool_calls

    assert [(c.name, c.call_id) for c in calls] == [
        ('a', 'a1'),
        ('b', 'b1'),
        ('a', 'a2'),
        ('a', None),
        ('b', None),
        ('c', 'own'),
    ]


def test_parallel_tasks_take_the_order_their_response_issued_them_in() -> None:
    """Calls run as tasks under spans of their own (LangGraph's `tools`) start in any order."""
    b = TreeBuilder(generic=True)
    run = b.agent('main')
    b.chat(run, issued=['first', 'second'])
    tasks = [b.span('tools', run, start=10), b.span('tools', run, start=11)]
    b.tool('b', tasks[1], call_id='second', start=12)  # the second task's call got going first
    b.tool('a', tasks[0], call_id='first', start=13)
    later = b.span('tools', run, start=40)
    b.tool('c', later, call_id='unlisted', start=41)

    tree = b.build()
    for node in tree:  # make the two calls overlap in time, the third start after both
        if node.name.startswith('execute_tool '):
            node.end_timestamp = node.start_timestamp + timedelta(seconds=1 if node.name != 'execute_tool c' else 0.1)
    for node in tree:
        if node.name == 'execute_tool c':
            node.start_timestamp = node.end_timestamp = max(n.end_timestamp for n in tree) + timedelta(seconds=1)

    assert [c.call_id for c in extract_trajectory(tree).tool_calls] == ['first', 'second', 'unlisted']
