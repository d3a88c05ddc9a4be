"""What the judges are told (`judges/prompts.py`): the tagged sections, and the answers they must give."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentic_evals.evaluators.judges.prompts import (
    GOAL_INFERRED_PROMPT,
    GOAL_WITH_REFERENCE_PROMPT,
    TOPIC_ADHERENCE_PROMPT,
    TRAJECTORY_JUDGE_PROMPT,
    TrajectoryGrading,
    build_prompt,
)


class _Opaque:
    def __repr__(self) -> str:
        return '<opaque>'


def test_sections_are_tagged_blocks_in_order() -> None:
    assert build_prompt([('Input', 'a question'), ('Output', {'answer': [1, 'two']}), ('Odd', _Opaque())]) == (
        '<Input>\na question\n</Input>\n<Output>\n{"answer":[1,"two"]}\n</Output>\n<Odd>\n<opaque>\n</Odd>'
    )
    assert build_prompt([]) == ''


@pytest.mark.parametrize(
    ('prompt', 'tags'),
    [
        (TOPIC_ADHERENCE_PROMPT, ['ReferenceTopics']),
        (GOAL_WITH_REFERENCE_PROMPT, ['Reference']),
        (GOAL_INFERRED_PROMPT, []),
        (TRAJECTORY_JUDGE_PROMPT, ['ExpectedOutput', 'Rubric']),
    ],
    ids=['topic-adherence', 'goal-with-reference', 'goal-inferred', 'trajectory-judge'],
)
def test_every_section_a_judge_is_sent_is_explained(prompt: str, tags: list[str]) -> None:
    for tag in ['Input', 'Output', 'Trajectory', *tags]:
        assert f'- <{tag}>' in prompt


def test_trajectory_grading_reads_llm_judges_shape_and_bounds_the_score() -> None:
    grading = TrajectoryGrading.model_validate({'reason': 'fine', 'pass': True, 'score': 1.0})
    assert (grading.pass_, grading.score) == (True, 1.0)
    assert grading.model_dump(by_alias=True) == {'reason': 'fine', 'pass': True, 'score': 1.0}
    for score in (-0.1, 1.1):
        with pytest.raises(ValidationError):
            TrajectoryGrading.model_validate({'reason': 'fine', 'pass': True, 'score': score})
