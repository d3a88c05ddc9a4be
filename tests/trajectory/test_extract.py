"""Extraction rules on hand-built trees: cases a real run cannot produce or cannot produce reliably."""

from __future__ import annotations

from agentic_evals import extract_trajectory
from agentic_evals.trajectory import extract

from ..factories import TreeBuilder


def names(tree_calls: object) -> list[str]:
    return [c.name for c in tree_calls]  # type: ignore[attr-defined]


def test_non_string_tool_name_is_skipped_with_a_note() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    b.tool(42, root)
    b.tool('search', root)
    t = extract_trajectory(b.build())
    assert names(t.tool_calls) == ['search']
    assert t.notes == ("span 'execute_tool 42' skipped: gen_ai.tool.name is int 42, not a string",)


def test_deferred_in_both_forms() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    # instrumentation >= 5: status UNSET; older: ERROR with an exception event
    b.tool('approve', root, **{'pydantic_ai.tool.deferral.name': 'ApprovalRequired'})
    b.tool('later', root, status='error', **{'pydantic_ai.tool.deferral.name': 'CallDeferred'})
    t = extract_trajectory(b.build())
    assert [(c.name, c.status, c.failure_stage) for c in t.tool_calls] == [
        ('approve', 'deferred', None),
        ('later', 'deferred', None),
    ]
    assert t.calls(include_failed=True) == []


def test_output_functions_in_both_forms_are_recorded_but_never_counted() -> None:
    b = TreeBuilder()
    root = b.span('agent run', agent_name='main')
    b.span('running output function', root, **{'gen_ai.tool.name': 'final'})
    b.tool('final2', root, **{'logfire.msg': 'running output function: final2'})
    b.tool('search', root)
    t = extract_trajectory(b.build())
    assert [(c.name, c.is_output_function) for c in t.tool_calls] == [
        ('final', True),
        ('final2', True),
        ('search', False),
    ]
    assert names(t.calls(include_failed=True)) == ['search']


def test_version_2_names_and_the_old_running_tools_layout() -> None:
    b = TreeBuilder()
    root = b.span('agent run', agent_name='main')
    group = b.span('running tools', root, tools=('search', 'fetch'))
    b.span('running tool', group, tool_arguments='{"q": 1}', tool_response='ok', **{'gen_ai.tool.name': 'search'})
    b.span('running tool', group, **{'gen_ai.tool.name': 'fetch'})
    t = extract_trajectory(b.build())
    assert [(c.name, c.arguments, c.result, c.agent_path) for c in t.tool_calls] == [
        ('search', {'q': 1}, 'ok', ('main',)),
        ('fetch', None, None, ('main',)),
    ]


def test_failure_stages() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('a', root, status='error', **{'pydantic_ai.tool.failure_stage': 'validation'})
    b.tool('b', root, status='error', **{'logfire.msg': 'invalid tool call: b'})
    b.tool('c', root, status='error', **{'pydantic_ai.tool.retry.cause': 'model_retry'})
    # before 2.60: a failed span with a result is a retry prompt; without one, the tool raised
    b.tool('d', root, status='error', **{'gen_ai.tool.call.result': 'try again'})
    b.tool('e', root, status='error')
    t = extract_trajectory(b.build())
    assert [(c.name, c.status, c.failure_stage) for c in t.tool_calls] == [
        ('a', 'failed', 'validation'),
        ('b', 'failed', 'validation'),
        ('c', 'failed', 'retry'),
        ('d', 'failed', 'retry'),
        ('e', 'failed', 'raised'),
    ]


def test_argument_problems_are_explained() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('none', root)
    b.tool('bad', root, arguments='{"q": ')
    b.tool('list', root, arguments='[1, 2]')
    b.tool('ok', root, arguments='{"q": "x"}')
    t = extract_trajectory(b.build())
    assert [(c.arguments, c.arguments_problem) for c in t.tool_calls] == [
        (None, 'not available in span (`include_content` may be disabled).'),
        (None, 'could not be parsed as JSON: Expecting value: line 1 column 7 (char 6)'),
        (None, 'are not a JSON object: [1, 2]'),
        ({'q': 'x'}, None),
    ]


def test_sub_agent_calls_carry_their_agent_path() -> None:
    b = TreeBuilder()
    main = b.agent('main')
    ask = b.tool('ask_expert', main)
    expert = b.agent('expert', ask)
    b.tool('lookup', expert)
    b.chat(expert, **{'gen_ai.usage.input_tokens': 7})
    t = extract_trajectory(b.build())
    assert [(c.name, c.agent, c.agent_path) for c in t.tool_calls] == [
        ('ask_expert', 'main', ('main',)),
        ('lookup', 'expert', ('main', 'expert')),
    ]
    assert [(a.name, a.path) for a in t.agents] == [('main', ('main',)), ('expert', ('main', 'expert'))]
    assert names(t.calls(agent='expert')) == ['lookup']
    assert names(t.calls(agent='main', include_subagents=False)) == ['ask_expert']
    assert names(t.calls(include_subagents=False)) == ['ask_expert']
    assert names(t.calls(agent='main')) == ['ask_expert', 'lookup']
    assert [r.agent for r in t.requests(agent='expert')] == ['expert']


def test_tokens_and_requests_come_from_model_request_spans_only() -> None:
    b = TreeBuilder()
    # agent spans repeat the run's totals; counting them would double the tokens
    main = b.agent('main')
    main.attributes.update({'gen_ai.usage.input_tokens': 30, 'gen_ai.aggregated_usage.input_tokens': 30})
    b.chat(main, **{'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 2, 'operation.cost': 0.5})
    b.chat(main, **{'gen_ai.usage.input_tokens': 20})  # output tokens of 0 are omitted
    b.span(
        'generate_content gemini', main, **{'gen_ai.operation.name': 'generate_content', 'gen_ai.request.model': 'g'}
    )
    b.span('embeddings', main, **{'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': 'e'})
    t = extract_trajectory(b.build())
    assert [(r.operation, r.input_tokens, r.output_tokens, r.cost) for r in t.model_requests] == [
        ('chat', 10, 2, 0.5),
        ('chat', 20, 0, None),
        ('generate_content', 0, 0, None),
    ]


def test_calls_of_one_response_follow_the_order_the_model_issued_them() -> None:
    b = TreeBuilder()
    main = b.agent('main')
    b.chat(main, issued=['c1', 'c2', 'c3'])
    # pydantic-ai validates every call before running any: c3's failed validation starts first
    b.tool('c', main, call_id='c3', status='error', **{'pydantic_ai.tool.failure_stage': 'validation'})
    b.tool('a', main, call_id='c1')
    b.tool('b', main, call_id='c2')
    b.tool('late', main, call_id='c9')
    t = extract_trajectory(b.build())
    assert names(t.tool_calls) == ['a', 'b', 'c', 'late']


def test_extraction_runs_once_per_tree(monkeypatch: object) -> None:
    calls: list[object] = []
    original = extract._extract

    def counting(tree: object) -> object:
        calls.append(tree)
        return original(tree)  # type: ignore[arg-type]

    monkeypatch.setattr(extract, '_extract', counting)  # type: ignore[attr-defined]
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('a', root)
    tree = b.build()
    first = extract_trajectory(tree)
    assert extract_trajectory(tree) is first
    assert len(calls) == 1
    b.tool('b', root)
    tree.add_spans([b.nodes[-1]])  # a tree that grew is extracted again
    assert names(extract_trajectory(tree).tool_calls) == ['a', 'b']
    assert len(calls) == 2


def test_the_cache_lets_trees_go() -> None:
    """The cached trajectory must not keep its tree alive (its lazy parts hold spans, not the tree)."""
    import gc
    import weakref

    refs = []
    for _ in range(3):
        b = TreeBuilder()
        root = b.agent('main')
        b.tool('a', b.tool('ask', root))
        tree = b.build()
        trajectory = extract_trajectory(tree)
        assert trajectory.agents and trajectory.tool_calls and trajectory.model_requests == ()
        refs.append(weakref.ref(tree))
        del tree, trajectory
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_google_adk_merged_tool_spans_are_not_calls() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('search', root)
    b.tool('(merged tools)', root)
    t = extract_trajectory(b.build())
    assert names(t.tool_calls) == ['search']
    assert t.notes == ()


def test_arguments_recorded_as_something_else_than_text_say_so() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    b.tool('a', root, **{'gen_ai.tool.call.arguments': ('x', 'y')})
    [call] = extract_trajectory(b.build()).tool_calls
    assert (call.arguments, call.arguments_problem) == (None, "were recorded as tuple ('x', 'y'), not as JSON text.")


def test_a_parent_that_starts_after_its_child_still_gives_the_agent_path() -> None:
    """Clock skew between processes: the walk meets the child first and resolves its ancestors then."""
    b = TreeBuilder()
    main = b.agent('main')
    ask = b.tool('ask_expert', main, start=100)
    expert = b.span('invoke_agent expert', ask, start=50, **{'gen_ai.agent.name': 'expert'})
    b.tool('lookup', expert, start=10)  # starts before both of its ancestors
    t = extract_trajectory(b.build())
    assert [(c.name, c.agent_path) for c in t.tool_calls] == [
        ('lookup', ('main', 'expert')),
        ('ask_expert', ('main',)),
    ]
    assert [(a.name, a.path) for a in t.agents] == [('main', ('main',)), ('expert', ('main', 'expert'))]
    assert names(t.calls(agent='expert', include_subagents=False)) == ['lookup']
