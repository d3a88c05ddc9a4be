"""`evaluate_trace_files`: what `agentic-evals-otel run` does, from Python, on any engine.

`evaluate_traces` takes loaded traces and returns a pydantic-evals report held in memory, which suits
a few thousand traces. This reads the files itself, on this machine's cores or a Ray cluster, and
returns the streamed `ReportDocument` (cases spooled on disk), so it suits millions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic_evals import Dataset
from pydantic_evals.evaluators import Evaluator

from ..offline.evaluate import GroupBy
from ..offline.suite import Suite
from ..reports.document import ReportDocument
from ..reports.stream import ReportBuilder
from .local import run_local
from .work import Job


def evaluate_trace_files(
    *sources: str | Path,
    dataset: Dataset[Any, Any, Any] | None = None,
    evaluators: Sequence[Evaluator[Any, Any, Any]] = (),
    name: str | None = None,
    engine: Literal['local', 'ray'] = 'local',
    workers: int = 1,
    address: str | None = None,
    results: str | Path | None = None,
    results_format: Literal['jsonl', 'parquet'] = 'jsonl',
    group_by: GroupBy | None = None,
    details: bool = False,
    judge_concurrency: int = 4,
) -> ReportDocument:
    """Score the traces in `sources` (files, directories, globs; `s3://` and `gs://` URIs with Ray)
    with a dataset's evaluators, or with `evaluators` on every trace, and return the report document.

    `workers` processes of this machine (`engine='local'`), or a Ray cluster (`engine='ray'`: the one
    at `address`, else a local one; needs `agentic-evals-otel[ray]`). The document is the same on
    every engine. Its cases are read back from a temporary file as they are iterated: iterate, do not
    index. `results` (Ray only) is a directory for one record per case and result (`results_format`).
    `details` draws each case's timeline and alignments (for an HTML or JSON report). With Ray, the LLM
    judges of at most `judge_concurrency` cases wait on the model at once.
    """
    if dataset is not None and evaluators:
        raise ValueError('pass a dataset (its evaluators run) or evaluators (every trace a case), not both')
    suite = Suite(
        name=name or (dataset.name if dataset is not None and dataset.name else None) or 'traces',
        path=Path('.'),
        dataset=dataset,
        evaluators=tuple(dataset.evaluators) if dataset is not None else tuple(evaluators),
    )
    job = Job.of(suite, details=details, group_by=group_by)
    paths = [str(source) for source in sources]
    builder = ReportBuilder(suite.name, expected=suite.expected_results(), rename=dataset is None)
    if engine == 'ray':
        from .ray import run_ray

        run_ray(job, paths, builder, address=address, results=None if results is None else str(results),
                results_format=results_format, judge_concurrency=judge_concurrency)  # fmt: skip
    else:
        if results is not None:
            raise ValueError("results is a directory of the Ray engine's part files; locally, iterate the document")
        run_local(job, paths, builder, workers=workers)
    return builder.document()
