"""AgentGoalAccuracy (`judges/goal_accuracy.py`): with a reference, an inferred goal, or the expected output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentic_evals import AgentGoalAccuracy
from agentic_evals.evaluators.judges.prompts import GOAL_INFERRED_PROMPT, GOAL_WITH_REFERENCE_PROMPT

from .scripted import (
    GOAL,
    OUTPUT,
    PROMPT,
    SUPPORT_TRAJECTORY,
    evaluate,
    judge,
    load_evaluators,
    reason,
    round_trip,
    support_context,
)


def test_with_a_reference() -> None:
    scripted = judge(GOAL)
    result = evaluate(AgentGoalAccuracy('Order 41 refunded', model=scripted.model), support_context())
    assert result == reason(
        0.0, "goal not achieved: The refund was not issued. (outcome: 'Reported the shipping date; no refund.')"
    )
    assert scripted.system_prompt == GOAL_WITH_REFERENCE_PROMPT
    assert scripted.prompt.endswith(
        f'<Trajectory>\n{SUPPORT_TRAJECTORY}\n</Trajectory>\n<Reference>\nOrder 41 refunded\n</Reference>'
    )
    assert scripted.prompt.startswith(f'<Input>\n{PROMPT}\n</Input>\n<Output>\n{OUTPUT}\n</Output>\n')


def test_without_a_reference_the_goal_is_inferred() -> None:
    scripted = judge({'goal': 'Track order 42 and get a refund.', **GOAL, 'achieved': True, 'reason': 'Both done.'})
    result = evaluate(AgentGoalAccuracy(model=scripted.model), support_context())
    assert result == reason(
        1.0,
        "goal achieved: Both done. (inferred goal: 'Track order 42 and get a refund.';"
        " outcome: 'Reported the shipping date; no refund.')",
    )
    assert scripted.system_prompt == GOAL_INFERRED_PROMPT
    assert scripted.prompt.endswith('</Trajectory>')  # no <Reference> section


def test_the_reference_from_the_expected_output() -> None:
    scripted = judge({**GOAL, 'achieved': True})
    ctx = support_context(expected_output={'refunded': 41})
    assert evaluate(AgentGoalAccuracy(use_expected_output=True, model=scripted.model), ctx).value == 1.0
    assert scripted.prompt.endswith('<Reference>\n{"refunded":41}\n</Reference>')
    # An explicit reference wins over the expected output.
    scripted = judge(GOAL)
    evaluate(AgentGoalAccuracy('Order 41 refunded', use_expected_output=True, model=scripted.model), ctx)
    assert scripted.prompt.endswith('<Reference>\nOrder 41 refunded\n</Reference>')


def test_a_missing_expected_output_fails_without_calling_the_judge() -> None:
    scripted = judge(GOAL)
    result = evaluate(AgentGoalAccuracy(use_expected_output=True, model=scripted.model), support_context())
    assert result == reason(0.0, 'no reference: `reference` is not set and the case has no expected_output')
    assert scripted.requests == []


# --- settings and files -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('arguments', 'problem'),
    [
        ({'reference': ''}, "reference must be a non-empty string or None, got ''"),
        ({'reference': ['done']}, "reference must be a non-empty string or None, got ['done']"),
        ({'use_expected_output': 'yes'}, "use_expected_output must be true or false, got 'yes'"),
    ],
)
def test_a_bad_setting_raises_naming_the_field(arguments: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError) as error:
        AgentGoalAccuracy(**arguments)
    assert str(error.value) == f'AgentGoalAccuracy: {problem}'


EVALUATORS = [
    AgentGoalAccuracy(),
    AgentGoalAccuracy('Order 41 refunded'),
    AgentGoalAccuracy(use_expected_output=True, model='anthropic:claude-sonnet-4-5', evaluation_name='goal'),
]


@pytest.mark.parametrize('suffix', ['.yaml', '.json'])
def test_dataset_file_round_trip(tmp_path: Path, suffix: str) -> None:
    text = round_trip(list(EVALUATORS), tmp_path / f'dataset{suffix}')
    if suffix == '.yaml':
        assert '- AgentGoalAccuracy\n' in text
        assert '- AgentGoalAccuracy: Order 41 refunded\n' in text


def test_hand_written_yaml(tmp_path: Path) -> None:
    assert load_evaluators(tmp_path, '- AgentGoalAccuracy\n') == [AgentGoalAccuracy()]
