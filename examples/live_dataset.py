"""The main job on bundled example data: a scripted pydantic-ai agent scored in a pydantic-evals Dataset.

Run it with `python -m examples.live_dataset`. The agent is the scripted scenario in
`fixtures/scenario.py`: searches and fetches, a `ModelRetry`, arguments that fail validation, a call
deferred for approval and one for external execution, an output function, delegation to an `expert`
sub-agent, and a second agent whose tool crashes. No network, no API key.

One evaluator is set to fail on purpose (a tool-call budget the agent overspends), so the report
shows what a failure and its reason look like.
"""

from __future__ import annotations

import sys
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic_evals import Case, Dataset

from agentic_evals import (
    ArgumentCorrectness,
    MaxModelRequests,
    MaxToolCalls,
    ToolCorrectness,
    TrajectoryMatch,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'fixtures'))
from scenario import SUPPORTED_VERSIONS, run_scenario_async


async def agent_task(version: int) -> str:
    """The task under evaluation: one run of the scripted agent, instrumented with format `version`."""
    run = await run_scenario_async(version=version)
    return run.output


def build_dataset() -> Dataset[int, str, None]:
    versions = [v for v in (2, 5) if v in SUPPORTED_VERSIONS]
    return Dataset[int, str, None](
        name='scripted_research_agent',
        cases=[Case(name=f'instrumentation_v{v}', inputs=v) for v in versions],
        evaluators=[
            ToolCorrectness(
                ['search', 'fetch', 'check_status', 'compute', 'ask_expert', 'delete_draft'], allow_extra=True
            ),
            TrajectoryMatch(['search', 'fetch', 'check_status', 'compute', 'ask_expert', 'delete_draft']),
            TrajectoryMatch(['lookup', 'lookup'], order='exact', agent='expert', evaluation_name='expert_trajectory'),
            ArgumentCorrectness('compute', {'a': 2, 'b': 3}),
            MaxModelRequests(20),
            # Fails on purpose: failed attempts count against a budget, and there are several.
            MaxToolCalls(10, evaluation_name='tool_budget'),
        ],
    )


def main() -> None:
    # pydantic-evals records each case's spans through the global tracer provider.
    trace.set_tracer_provider(TracerProvider())
    report = build_dataset().evaluate_sync(agent_task, progress=False)
    report.print(include_input=True, include_output=False, include_durations=False, include_reasons=True, width=200)


if __name__ == '__main__':
    main()
