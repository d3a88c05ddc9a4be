"""Agent paths: a run that lost its link to the calling tool is nested in it, and only such a run."""

from __future__ import annotations

from datetime import timedelta

from agentic_evals import extract_trajectory

from ..factories import TreeBuilder

TRACELOOP_AGENT = {'traceloop.span.kind': 'agent'}


def test_parallel_agents_under_one_task_span_stay_apart() -> None:
    """pydantic-ai agents gathered under one span are not each other's sub-agents, whatever the times."""
    b = TreeBuilder()
    task = b.span('task')
    researcher = b.agent('researcher', task)
    slow = b.tool('slow_search', researcher)  # starts before the other run, and outlasts it
    summariser = b.agent('summariser', task)
    b.tool('summarise', summariser)
    tree = b.build()
    slow.end_timestamp = max(n.end_timestamp for n in tree) + timedelta(seconds=1)  # holds the other run

    trajectory = extract_trajectory(tree)

    assert [(c.name, c.agent_path) for c in trajectory.tool_calls] == [
        ('slow_search', ('researcher',)),
        ('summarise', ('summariser',)),
    ]
    assert [run.path for run in trajectory.agents] == [('researcher',), ('summariser',)]


def test_a_run_parented_to_the_root_is_nested_in_the_call_it_ran_in() -> None:
    """OpenLLMetry's sub-agent hangs from the trace's root; its time lies inside the calling tool."""
    b = TreeBuilder()
    root = b.span('Agent Workflow')
    orchestrator = b.agent('orchestrator', root)
    orchestrator.attributes.update(TRACELOOP_AGENT)
    ask = b.tool('ask_expert', orchestrator)
    expert = b.agent('expert', root)
    expert.attributes.update(TRACELOOP_AGENT)
    b.tool('search_docs', expert)
    tree = b.build()
    ask.end_timestamp = orchestrator.end_timestamp = max(n.end_timestamp for n in tree) + timedelta(seconds=1)

    trajectory = extract_trajectory(tree)

    assert [(c.name, c.agent_path) for c in trajectory.tool_calls] == [
        ('ask_expert', ('orchestrator',)),
        ('search_docs', ('orchestrator', 'expert')),
    ]


def test_a_run_is_never_nested_in_its_own_call() -> None:
    """With equal (or missing) times, the run's own call holds it in time: it must not adopt it."""
    b = TreeBuilder()
    root = b.span('Agent Workflow')
    main = b.agent('main', root)
    main.attributes.update(TRACELOOP_AGENT)
    call = b.tool('a', main)
    tree = b.build()
    for node in (root, main, call):
        node.start_timestamp = node.end_timestamp = root.start_timestamp

    trajectory = extract_trajectory(tree)

    assert trajectory.tool_calls[0].agent_path == ('main',)
    assert [run.path for run in trajectory.agents] == [('main',)]
