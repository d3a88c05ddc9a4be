"""Pure scoring: sequences (LCS, multisets, F1), call matching, reason phrases and the metric functions.

No OpenTelemetry and no pydantic-evals here: the inputs are trajectories, lists and dicts, the
outputs values and reasons, so the CLI, the evaluators and users' code share one definition.
"""
