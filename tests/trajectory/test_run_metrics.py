"""Run metrics count the trajectory's model requests, with the same tokens, so nothing counts twice."""

from __future__ import annotations

from agentic_evals import extract_trajectory
from agentic_evals.trajectory.run_metrics import span_tree_metrics

from ..factories import TreeBuilder


def test_only_model_requests_count_and_their_usage_is_summed() -> None:
    b = TreeBuilder()
    # an agent span repeating the run's totals, with a model: not a request, its usage not counted
    main = b.agent('main')
    main.attributes.update({'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': 30})
    b.chat(main, **{'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 2, 'operation.cost': 0.5})
    b.chat(main, **{'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.details.reasoning_tokens': 4})
    b.span('generate_content g', main, **{'gen_ai.operation.name': 'generate_content', 'gen_ai.request.model': 'g'})
    # a model span without an operation (logfire's openai-agents spans): a request for both
    b.span('chat x', main, **{'gen_ai.request.model': 'x', 'gen_ai.usage.input_tokens': 100})
    # one wrapping another model span (ADK's schema v1 `call_llm`): only the inner one counts
    outer = b.span('call_llm', main, **{'gen_ai.request.model': 'y', 'gen_ai.usage.input_tokens': 7})
    b.span('generate_content y', outer, **{'gen_ai.operation.name': 'generate_content', 'gen_ai.request.model': 'y'})
    tree = b.build()
    metrics = span_tree_metrics(tree)
    assert metrics == {'requests': 5, 'input_tokens': 130, 'output_tokens': 2, 'cost': 0.5, 'reasoning_tokens': 4}
    assert next(iter(metrics)) == 'requests'
    requests = extract_trajectory(tree).model_requests
    assert metrics['requests'] == len(requests)
    assert metrics['input_tokens'] == sum(r.input_tokens for r in requests)


def test_no_model_request_gives_no_metric() -> None:
    b = TreeBuilder()
    b.tool('a', b.agent('main'))
    assert span_tree_metrics(b.build()) == {}


def test_the_metrics_and_a_budget_share_one_walk_of_the_requests() -> None:
    b = TreeBuilder()
    root = b.agent('main')
    b.chat(root)
    b.tool('a', root)
    tree = b.build()
    assert span_tree_metrics(tree) == {'requests': 1}
    trajectory = extract_trajectory(tree)
    source = trajectory._source
    assert source is not None and source._requests is not None and source._walked is None  # type: ignore[attr-defined]
    assert trajectory.request_count() == 1 and trajectory.call_count() == 1
    assert source._walked is None  # type: ignore[attr-defined]  # counts read no columns
    assert trajectory.call_names() == ['a']
