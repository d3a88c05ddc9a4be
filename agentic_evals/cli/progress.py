"""The progress display of `agentic-evals-otel run`, on stderr so it never mixes with the report.

It appears only when there are many traces (`SHOW_AFTER`): loading streams, so the count is not
known up front and the display starts once that many traces are in; scoring shows a bar over the
cases. It is transient (erased when done) and is off when stderr is not a terminal.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

SHOW_AFTER = 20
"""Traces loaded (or cases to score) before the display appears; fewer finish too fast to need it."""


class TraceProgress:
    """Counts loaded traces and scored cases; draws nothing unless enabled and there are many."""

    def __init__(self, console: Console, *, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn('{task.description}'),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._started = False
        self._loading: TaskID | None = None
        self._scoring: TaskID | None = None
        self.loaded_count = 0
        self.scored_count = 0
        self._scoring_total: int | None = None
        self._scoring_requested = False

    def __enter__(self) -> TraceProgress:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._started:
            self._progress.stop()

    def _start(self) -> None:
        if self.enabled and not self._started:
            self._progress.start()
            self._started = True

    def loaded(self) -> None:
        self.loaded_count += 1
        if self.loaded_count >= SHOW_AFTER:
            self._start()
        if not self._started:
            return
        if self._loading is None:
            self._loading = self._progress.add_task('Loading traces', total=None)
        self._progress.update(self._loading, completed=self.loaded_count)

    def start_scoring(self, cases: int | None) -> None:
        """Start the scoring bar: `cases` to score, or `None` while traces still stream in."""
        self._scoring_total = cases
        self._scoring_requested = True
        if cases is not None and cases >= SHOW_AFTER:
            self._start()
        self._ensure_scoring_task()

    def _ensure_scoring_task(self) -> None:
        # Streaming shows the bar once enough traces have loaded, which may be after scoring began.
        if not (self._started and self._scoring is None and self._scoring_requested):
            return
        if self._loading is not None and self._scoring_total is not None:
            self._progress.update(self._loading, total=self.loaded_count, completed=self.loaded_count)
        self._scoring = self._progress.add_task('Scoring cases', total=self._scoring_total)
        self._progress.update(self._scoring, completed=self.scored_count)

    def scored(self) -> None:
        self.scored_count += 1
        self._ensure_scoring_task()
        if self._scoring is not None:
            self._progress.update(self._scoring, completed=self.scored_count)
