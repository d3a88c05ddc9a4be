"""TrajectoryJudge (`judges/trajectory_judge.py`): a rubric over the trajectory, reported as `LLMJudge` reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentic_evals import TrajectoryJudge, evaluator_context
from agentic_evals.evaluators.judges.prompts import TRAJECTORY_JUDGE_PROMPT

from .scripted import (
    GRADING,
    NO_SPAN_TREE,
    NO_TREE,
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


def test_the_prompt_and_the_default_output() -> None:
    scripted = judge(GRADING)
    rubric = 'The agent never calls refund without a reason.'
    result = evaluate(TrajectoryJudge(rubric, model=scripted.model), support_context(expected_output='ignored'))
    assert result == {'TrajectoryJudge': reason(False, 'It retried the refund without a reason.')}
    assert scripted.system_prompt == TRAJECTORY_JUDGE_PROMPT
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
<Rubric>
{rubric}
</Rubric>"""
    )


def test_the_expected_output_is_shown_when_asked() -> None:
    scripted = judge(GRADING)
    ctx = support_context(expected_output={'shipped': True})
    evaluate(TrajectoryJudge('r', include_expected_output=True, model=scripted.model), ctx)
    assert scripted.prompt.endswith(
        '</Trajectory>\n<ExpectedOutput>\n{"shipped":true}\n</ExpectedOutput>\n<Rubric>\nr\n</Rubric>'
    )


@pytest.mark.parametrize(
    ('options', 'expected'),
    [
        ({'score': {}}, {'TrajectoryJudge_score': 0.25, 'TrajectoryJudge_pass': reason(False, GRADING['reason'])}),
        (
            {'score': {'evaluation_name': 'quality', 'include_reason': True}, 'assertion': False},
            {'quality': reason(0.25, GRADING['reason'])},
        ),
        ({'assertion': {}, 'evaluation_name': 'tools'}, {'tools': False}),
        (
            {'score': {}, 'evaluation_name': 'tools'},
            {'tools_score': 0.25, 'tools_pass': reason(False, GRADING['reason'])},
        ),
    ],
)
def test_outputs_follow_llm_judge(options: dict[str, Any], expected: dict[str, Any]) -> None:
    assert evaluate(TrajectoryJudge('r', model=judge(GRADING).model, **options), support_context()) == expected


def test_a_span_tree_is_needed() -> None:
    scripted = judge(GRADING)
    ctx = evaluator_context(NO_TREE, inputs='q', output='a')
    result = evaluate(TrajectoryJudge('r', model=scripted.model, score={}), ctx)
    assert result == {
        'TrajectoryJudge_score': reason(0.0, NO_SPAN_TREE),
        'TrajectoryJudge_pass': reason(False, NO_SPAN_TREE),
    }
    assert scripted.requests == []


# --- settings and files -----------------------------------------------------------------------------------

OUTPUT_CONFIG = 'must be false or a mapping with evaluation_name and include_reason (both optional)'


@pytest.mark.parametrize(
    ('arguments', 'problem'),
    [
        ({'rubric': ''}, "rubric must be a non-empty string, got ''"),
        ({'rubric': None}, 'rubric must be a non-empty string, got None'),
        ({'include_expected_output': 1}, 'include_expected_output must be true or false, got 1'),
        ({'score': True}, f'score {OUTPUT_CONFIG}, got True'),
        ({'score': 'yes'}, f"score {OUTPUT_CONFIG}, got 'yes'"),
        (
            {'score': {'name': 'q'}},
            "score has unknown key(s) 'name' (known: 'evaluation_name', 'include_reason')",
        ),
        ({'score': {'evaluation_name': 3}}, 'score.evaluation_name must be a string, got 3'),
        ({'assertion': None}, f'assertion {OUTPUT_CONFIG}, got None'),
        ({'assertion': {'include_reason': 'no'}}, "assertion.include_reason must be true or false, got 'no'"),
        ({'assertion': False}, 'score and assertion are both False: the judge would report nothing'),
    ],
)
def test_a_bad_setting_raises_naming_the_field(arguments: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError) as error:
        TrajectoryJudge(**{'rubric': 'r', **arguments})
    assert str(error.value) == f'TrajectoryJudge: {problem}'


EVALUATORS = [
    TrajectoryJudge('never retries a failed call'),
    TrajectoryJudge(
        'r',
        include_expected_output=True,
        score={'evaluation_name': 'quality', 'include_reason': True},
        assertion=False,
        agent='billing',
    ),
]


@pytest.mark.parametrize('suffix', ['.yaml', '.json'])
def test_dataset_file_round_trip(tmp_path: Path, suffix: str) -> None:
    text = round_trip(list(EVALUATORS), tmp_path / f'dataset{suffix}')
    if suffix == '.yaml':
        assert '- TrajectoryJudge: never retries a failed call\n' in text


def test_hand_written_yaml(tmp_path: Path) -> None:
    loaded = load_evaluators(
        tmp_path, '- TrajectoryJudge: {rubric: r, model: "openai:gpt-4o", score: {}, agent: billing}\n'
    )
    assert loaded == [TrajectoryJudge('r', model='openai:gpt-4o', score={}, agent='billing')]
