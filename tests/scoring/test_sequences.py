from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentic_evals.scoring.sequences import diff_arguments, f1, lcs_length, lcs_score, multiset_diff, multiset_score

names = st.lists(st.sampled_from('abcdef'), max_size=40)


def reference_lcs(a: list[str], b: list[str]) -> int:
    """The textbook quadratic dynamic programme, as an oracle."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a, 1):
        for j, y in enumerate(b, 1):
            table[i][j] = table[i - 1][j - 1] + 1 if x == y else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


@given(names, names)
def test_lcs_matches_the_dynamic_programme(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == reference_lcs(a, b)


@given(names, names)
def test_lcs_is_symmetric_and_bounded(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == lcs_length(b, a) <= min(len(a), len(b))


def test_lcs_on_long_sequences() -> None:
    a = ['x', 'y'] * 2000
    assert lcs_length(a, a) == 4000
    assert lcs_length(a, ['y', 'x'] * 2000) == 3999


@given(names, names)
def test_scores_are_in_unit_interval(expected: list[str], actual: list[str]) -> None:
    for score in (lcs_score(expected, actual), multiset_score(expected, actual)):
        assert 0.0 <= score.value <= 1.0
        assert 0.0 <= score.precision <= 1.0
        assert 0.0 <= score.recall <= 1.0


@given(st.lists(st.sampled_from('abcdef'), min_size=1, max_size=40))
def test_identical_sequences_score_one(items: list[str]) -> None:
    assert lcs_score(items, items).value == 1.0
    assert multiset_score(items, list(reversed(items))).value == 1.0


@given(names, names)
def test_any_order_is_symmetric_and_at_least_in_order(a: list[str], b: list[str]) -> None:
    assert multiset_score(a, b).value == multiset_score(b, a).value
    assert multiset_score(a, b).value >= lcs_score(a, b).value


@given(names, names)
def test_multiset_diff_accounts_for_every_item(expected: list[str], actual: list[str]) -> None:
    missing, extra = multiset_diff(expected, actual)
    assert len(expected) - missing.total() == len(actual) - extra.total()


def test_describe_uses_fractions_and_three_decimals() -> None:
    assert lcs_score(['a', 'b', 'c'], ['a', 'x', 'c']).describe('LCS') == (
        'LCS=2, precision=2/3=0.667, recall=2/3=0.667, F1=0.667'
    )


def test_f1_of_zero_is_zero() -> None:
    assert f1(0.0, 0.0) == 0.0


def test_diff_arguments_subset_and_exact() -> None:
    actual = {'q': 'x', 'n': 1, 'extra': True}
    assert diff_arguments(actual, {'q': 'x', 'n': 1.0}, 'subset') == []
    assert diff_arguments(actual, {'q': 'y', 'm': 2}, 'subset') == ["key 'q': expected 'y', got 'x'", "missing key 'm'"]
    assert diff_arguments(actual, {'q': 'x', 'n': 1}, 'exact') == ["unexpected key 'extra' with value True"]


def test_long_values_are_cut_in_reasons() -> None:
    huge = 'x' * 10_000
    [problem] = diff_arguments({'q': huge}, {'q': 'short'}, 'subset')
    assert problem == f"key 'q': expected 'short', got '{'x' * 296}..."
    assert len(problem) < 350
