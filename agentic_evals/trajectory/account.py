"""What a trace held, and where each fact of its trajectory came from: its account.

A trace says what an agent did twice, in the tool spans that ran and in the model responses that
issued the calls. The account counts both sources and how they were joined, so a reader (and a
failing reason) can tell a run that did nothing from a trace that recorded nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TraceAccount:
    """Counts of what the trace held (see `Trajectory.account`)."""

    spans: int
    families: tuple[str, ...]
    """The instrumentation families recognised, most specific first."""
    tool_spans: int
    """Tool call attempts read from spans (output functions and deferred calls included)."""
    arguments_from_spans: int
    """Calls whose arguments the tool span recorded as an object."""
    arguments_from_responses: int
    """Calls whose arguments came from the response that issued them (the span had none, or a bare value)."""
    arguments_missing: int
    results: int
    """Calls whose span recorded a result."""
    model_spans: int
    with_tokens: int
    """Model requests that recorded token usage."""
    issued: int
    """Calls the recorded model responses issued."""
    issued_not_run: tuple[str, ...]
    """Issued calls no tool span ran, as `name (id)`."""
    run_not_issued: tuple[str, ...]
    """Calls that ran while the response that issued them lists other calls only, as `name (id)`."""
    agents: tuple[str, ...]
    """Distinct agent names, sorted."""

    def summary(self) -> str:
        """One line: what the trace held, for `inspect` and a failing reason."""
        arguments = (
            f'arguments: {self.arguments_from_spans} from spans, {self.arguments_from_responses} from the'
            f' issuing responses, {self.arguments_missing} missing'
        )
        parts = [
            f'{self.spans} span(s)',
            f'{self.tool_spans} tool span(s) ({arguments}; {self.results} with a result)',
            f'{self.model_spans} model span(s) ({self.with_tokens} with tokens; {self.issued} call(s) issued)',
            f'agents: {", ".join(self.agents) if self.agents else "none"}',
            f'read as: {", ".join(self.families) if self.families else "nothing recognised"}',
        ]
        if self.issued_not_run:
            parts.append(f'issued, never run: {", ".join(self.issued_not_run)}')
        if self.run_not_issued:
            parts.append(f'run, never issued: {", ".join(self.run_not_issued)}')
        return '; '.join(parts)

    def notes(self) -> list[str]:
        """The mismatches between the two sources, one note each (kept in `Trajectory.notes`)."""
        return [
            *(
                f'call {call} was issued by a model response, but no tool span of it was read'
                for call in self.issued_not_run
            ),
            *(
                f'call {call} ran, but the response that issued its neighbours lists no such call'
                for call in self.run_not_issued
            ),
        ]
