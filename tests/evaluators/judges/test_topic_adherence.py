"""TopicAdherence (`judges/topic_adherence.py`): the prompt, the scores computed from the judge's topics, settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest

from agentic_evals import TopicAdherence
from agentic_evals.evaluators.judges.prompts import TOPIC_ADHERENCE_PROMPT

from .scripted import (
    OUTPUT,
    PROMPT,
    SUPPORT_TRAJECTORY,
    evaluate,
    judge,
    load_evaluators,
    reason,
    round_trip,
    support_context,
    topics,
)

TOPICS = topics(
    ('order status', True, 'orders'),
    ('refund', True, 'Refunds'),  # spelling is normalised
    ('weather', True, None),
    ('card fraud', False, 'refunds'),
    ('politics', False, None),
)
GROUPS = (
    "answered on-topic: 'order status' -> 'orders', 'refund' -> 'refunds'; answered off-topic: 'weather';"
    " refused on-topic: 'card fraud' -> 'refunds'; refused off-topic: 'politics'"
)


def test_the_judge_is_shown_the_conversation_trajectory_and_topics() -> None:
    scripted = judge(TOPICS)
    result = evaluate(TopicAdherence(['orders', 'refunds'], mode='precision', model=scripted.model), support_context())
    assert result == reason(2 / 3, f'precision=2/3=0.667; {GROUPS}')
    assert scripted.system_prompt == TOPIC_ADHERENCE_PROMPT
    assert (
        scripted.prompt
        == f"""\
<Input>
{PROMPT}
</Input>
<Output>
{OUTPUT}
</Output>
<Trajectory>
{SUPPORT_TRAJECTORY}
</Trajectory>
<ReferenceTopics>
orders
refunds
</ReferenceTopics>"""
    )


@pytest.mark.parametrize(
    ('mode', 'value', 'summary'),
    [
        ('precision', 2 / 3, 'precision=2/3=0.667'),
        ('recall', 2 / 3, 'recall=2/3=0.667'),
        ('f1', 2 / 3, 'F1=0.667 (precision=2/3=0.667, recall=2/3=0.667)'),
    ],
)
def test_modes(mode: Any, value: float, summary: str) -> None:
    result = evaluate(TopicAdherence(['orders', 'refunds'], mode=mode, model=judge(TOPICS).model), support_context())
    assert result == reason(value, f'{summary}; {GROUPS}')


@pytest.mark.parametrize(
    ('answer', 'mode', 'value', 'reason_text'),
    [
        (
            topics(('a', True, 'x'), ('b', False, 'x')),
            'f1',
            2 / 3,
            "F1=0.667 (precision=1/1=1.000, recall=1/2=0.500); answered on-topic: 'a' -> 'x'; answered off-topic: none; refused on-topic: 'b' -> 'x'; refused off-topic: none",
        ),
        (
            topics(('a', False, 'x')),
            'precision',
            0.0,
            "precision=0/0 (undefined, scored 0); answered on-topic: none; answered off-topic: none; refused on-topic: 'a' -> 'x'; refused off-topic: none",
        ),
        (
            topics(('a', True, None)),
            'recall',
            0.0,
            "recall=0/0 (undefined, scored 0); answered on-topic: none; answered off-topic: 'a'; refused on-topic: none; refused off-topic: none",
        ),
        (
            topics(('a', True, None)),
            'f1',
            0.0,
            "F1=0.000 (precision=0/1=0.000, recall=0/0 (undefined, scored 0)); answered on-topic: none; answered off-topic: 'a'; refused on-topic: none; refused off-topic: none",
        ),
        (topics(), 'f1', 0.0, 'the judge found no topics in the conversation'),
    ],
    ids=['f1', 'nothing-answered', 'nothing-on-topic', 'f1-zero', 'no-topics'],
)
def test_edge_scores(answer: dict[str, Any], mode: Any, value: float, reason_text: str) -> None:
    result = evaluate(TopicAdherence(['x'], mode=mode, model=judge(answer).model), support_context())
    assert result == reason(value, reason_text)


def test_the_judge_is_asked_again_when_a_reference_topic_is_unknown() -> None:
    scripted = judge(topics(('a', True, 'shipping')), topics(('a', True, 'orders')))
    result = evaluate(TopicAdherence(['orders'], model=scripted.model), support_context())
    assert result.value == 1.0
    # The retry goes back as a RetryPromptPart (2.4) or a retried ToolReturnPart (2.62): same text.
    retry = scripted.requests[1][-1]
    assert isinstance(retry, ModelRequest)
    assert [str(getattr(p, 'content', '')) for p in retry.parts] == [
        "reference_topic must be one of ['orders'] or null; got ['shipping']"
    ]


def test_a_judge_that_keeps_inventing_topics_fails() -> None:
    result = evaluate(TopicAdherence(['orders'], model=judge(topics(('a', True, 'shipping'))).model), support_context())
    assert result == reason(
        0.0,
        'judge failed: UnexpectedModelBehavior: Exceeded maximum output retries (1) (last error: ModelRetry:'
        " reference_topic must be one of ['orders'] or null; got ['shipping'])",
    )


# --- settings and files -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('arguments', 'problem'),
    [
        ({'reference_topics': []}, 'reference_topics must be a non-empty list of topics, got []'),
        ({'reference_topics': ['a', ' ']}, "reference_topics must be a non-empty list of topics, got ['a', ' ']"),
        ({'reference_topics': 'orders'}, "reference_topics must be a non-empty list of topics, got 'orders'"),
        ({'reference_topics': ['a', 3]}, "reference_topics must be a non-empty list of topics, got ['a', 3]"),
        ({'mode': 'f2'}, "mode must be one of 'precision', 'recall', 'f1'; got 'f2'"),
        ({'mode': None}, "mode must be one of 'precision', 'recall', 'f1'; got None"),
    ],
)
def test_a_bad_setting_raises_naming_the_field(arguments: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError) as error:
        TopicAdherence(**{'reference_topics': ['a'], **arguments})
    assert str(error.value) == f'TopicAdherence: {problem}'


EVALUATORS = [
    TopicAdherence(['orders', 'refunds']),
    TopicAdherence(
        ['orders'],
        mode='precision',
        model='openai:gpt-4o',
        model_settings={'temperature': 0.0},
        evaluation_name='topics',
        agent='support',
        include_subagents=False,
    ),
]


@pytest.mark.parametrize('suffix', ['.yaml', '.json'])
def test_dataset_file_round_trip(tmp_path: Path, suffix: str) -> None:
    text = round_trip(list(EVALUATORS), tmp_path / f'dataset{suffix}')
    if suffix == '.yaml':
        assert '- TopicAdherence:\n  - orders\n  - refunds\n' in text


def test_hand_written_yaml(tmp_path: Path) -> None:
    assert load_evaluators(tmp_path, '- TopicAdherence: [orders, refunds]\n') == [TopicAdherence(['orders', 'refunds'])]
