"""LLM-judged evaluators: topic adherence, goal accuracy, and a rubric over the whole trajectory.

They choose and call their model the way pydantic-evals' `LLMJudge` does (a `model` field, else
the default judge model set with `set_default_judge_model`), show the judge the case's inputs,
output and rendered trajectory, make it answer with a pydantic model, and compute scores from
that answer in Python. A judge that cannot answer (model error, network error, invalid output
after retries) gives a failing result whose reason starts `judge failed:`; it never raises.
"""
