"""The main job on the bundled example data: score captured traces and gate a release on them.

Run it with `make demo` (or `python -m examples.demo`). It uses the traces of a scripted support
agent in `fixtures/support/` (regenerate them with `python -m fixtures.generate`) and the dataset
that says what a good run does, `fixtures/support/dataset.yaml`:

1. `agentic-evals-otel run` on the baseline traces: every gate passes (exit status 0);
2. the same on the regressed traces: the gates fail and the report says why (exit status 1);
3. `agentic-evals-otel compare` of the two JSON reports: the regression gate fails (exit status 1).

Nothing is re-run: the agent's spans are read from the trace files.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from agentic_evals.cli import main as agentic_evals

SUPPORT = Path(__file__).resolve().parent.parent / 'fixtures' / 'support'
GATES = ['--min-score', 'TrajectoryMatch=0.9', '--max-fail-rate', '0']


def step(title: str, argv: list[str], expected_status: int) -> bool:
    print(f'\n$ agentic-evals-otel {" ".join(argv)}\n# {title}', flush=True)
    status = agentic_evals(argv)
    print(f'# exit status {status} (expected {expected_status})', flush=True)
    return status == expected_status


def run_demo(out: Path) -> bool:
    dataset = str(SUPPORT / 'dataset.yaml')
    baseline, regressed = out / 'baseline.json', out / 'regressed.json'
    return all(
        [
            step(
                'the baseline traces: all gates pass',
                [
                    'run',
                    dataset,
                    str(SUPPORT / 'baseline.otlp.jsonl'),
                    *GATES,
                    '--json',
                    str(baseline),
                    '--no-progress',
                ],
                0,
            ),
            step(
                'the regressed traces: the gates fail, with the reasons',
                [
                    'run',
                    dataset,
                    str(SUPPORT / 'regressed.otlp.jsonl'),
                    *GATES,
                    '--json',
                    str(regressed),
                    '--no-progress',
                ],
                1,
            ),
            step('what got worse between the two runs', ['compare', str(baseline), str(regressed)], 1),
        ]
    )


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        ok = run_demo(Path(tmp))
    print('\ndemo finished as expected' if ok else '\ndemo: an exit status was not the expected one', flush=True)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
