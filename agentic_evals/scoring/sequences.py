"""Pure scoring functions over plain lists and dicts.

Nothing here knows about spans, OpenTelemetry or pydantic-evals, so every function can be
property-tested in isolation and reused from the CLI, from other evaluators or from user code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of `a` and `b`.

    Bit-parallel (Allison-Dix / Hyyrö): one big-integer bit per element of `a`, one pass over `b`
    with a handful of word operations per element. That keeps 3,000-step trajectories in the
    millisecond range where the textbook dynamic programme needs millions of Python steps.
    """
    if len(a) < len(b):
        a, b = b, a  # the longer sequence becomes the bit vector: fewer loop iterations
    if not b:
        return 0
    masks: dict[Hashable, int] = {}
    for position, item in enumerate(a):
        masks[item] = masks.get(item, 0) | (1 << position)
    all_ones = (1 << len(a)) - 1
    v = all_ones
    for item in b:
        match = masks.get(item)
        if match is None:
            continue
        u = v & match
        v = ((v + u) | (v - u)) & all_ones
    # Each zero bit of `v` marks one element of the LCS.
    return len(a) - v.bit_count()


def multiset_overlap(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Size of the multiset intersection: repeated items count as often as both sides have them."""
    return sum((Counter(a) & Counter(b)).values())


def multiset_diff(expected: Sequence[Hashable], actual: Sequence[Hashable]) -> tuple[Counter[Any], Counter[Any]]:
    """`(missing, extra)`: what `expected` has beyond `actual`, and what `actual` has beyond `expected`."""
    want, got = Counter(expected), Counter(actual)
    return want - got, got - want


def f1(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall, 0.0 when both are 0."""
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


SCORE_TOLERANCE = 1e-9
"""How far below a threshold a score may be and still reach it: F1 computed as the built-ins do
(`2pr / (p + r)`) lands a unit in the last place below exact fractions (3/4 as 0.7499999999999999)."""


def at_least(value: float, threshold: float) -> bool:
    """`value >= threshold`, forgiving float rounding (what thresholds and gates compare with)."""
    return value >= threshold - SCORE_TOLERANCE


def at_most(value: float, limit: float) -> bool:
    """`value <= limit`, forgiving float rounding."""
    return value <= limit + SCORE_TOLERANCE


@dataclass(frozen=True)
class F1Score:
    """Precision, recall and F1 of `matched` items out of `actual` and `expected` counts."""

    matched: int
    actual: int
    expected: int

    @property
    def precision(self) -> float:
        return self.matched / self.actual if self.actual else 0.0

    @property
    def recall(self) -> float:
        return self.matched / self.expected if self.expected else 0.0

    @property
    def value(self) -> float:
        return f1(self.precision, self.recall)

    def describe(self, label: str) -> str:
        """The figures in the fixed form reasons use, e.g. `LCS=2, precision=2/3=0.667, ...`."""
        return f1_figures(self.matched, self.actual, self.expected, label)[1]


@lru_cache(maxsize=4096, typed=True)
def f1_figures(matched: int, actual: int, expected: int, label: str) -> tuple[float, str]:
    """`F1Score(matched, actual, expected)`'s value and `describe(label)`, each figure computed once.

    Cached: printing three floats costs more than the rest of a small case's score, and the same few
    counts recur across cases (trajectories of one agent are about the same length).
    """
    precision = matched / actual if actual else 0.0
    recall = matched / expected if expected else 0.0
    value = f1(precision, recall)
    return value, (
        f'{label}={matched}, precision={matched}/{actual}={precision:.3f}, '
        f'recall={matched}/{expected}={recall:.3f}, F1={value:.3f}'
    )


def lcs_score(expected: Sequence[Hashable], actual: Sequence[Hashable]) -> F1Score:
    """Order-aware F1: matches are the longest common subsequence."""
    return F1Score(lcs_length(actual, expected), len(actual), len(expected))


def multiset_score(expected: Sequence[Hashable], actual: Sequence[Hashable]) -> F1Score:
    """Order-free F1: matches are the multiset intersection."""
    return F1Score(multiset_overlap(expected, actual), len(actual), len(expected))


def diff_arguments(
    actual: Mapping[str, Any], expected: Mapping[str, Any], match_mode: Literal['exact', 'subset']
) -> list[str]:
    """Human-readable differences between top-level argument dicts; empty means they match.

    Values compare with `==` (so `1 == 1.0` and nested values must be equal as a whole), which
    is the contract of pydantic-evals' `ArgumentCorrectness`.
    """
    problems: list[str] = []
    for key, want in expected.items():
        if key not in actual:
            problems.append(f'missing key {key!r}')
        elif actual[key] != want:
            problems.append(f'key {key!r}: expected {short_repr(want)}, got {short_repr(actual[key])}')
    if match_mode == 'exact':
        problems.extend(
            f'unexpected key {key!r} with value {short_repr(value)}'
            for key, value in actual.items()
            if key not in expected
        )
    return problems


def short_repr(value: object, limit: int = 300) -> str:
    """`repr(value)`, cut to `limit` characters: a 5 MB argument must not become a 5 MB reason."""
    text = repr(value)
    return text if len(text) <= limit else f'{text[: limit - 3]}...'
