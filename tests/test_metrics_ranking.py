"""Kendall's tau distance (TopicDP §4) and Fagin et al.'s K^(p) for top-n lists."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from kendall_distances import kendall_tau_distance, topn_kendall_distance


def mean_kendall_distance(released, reference, *, top_n: int | None = None, p: float = 0.5) -> float:
    """Kendall distance averaged over topics, row i of ``released`` against row i of ``reference``.

    Row-aligned matrices (output perturbation keeps each topic's row; align others with
    :func:`topicdp.metrics.match_topics`). ``top_n=None`` compares the rankings of all V columns
    (:func:`kendall_tau_distance`), an int k the top-k lists (:func:`topn_kendall_distance` with penalty ``p``).
    """
    a = np.asarray(released, dtype=float)
    b = np.asarray(reference, dtype=float)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"released and reference must be 2-D of the same shape, got {a.shape} and {b.shape}")
    if top_n is None:
        values = [kendall_tau_distance(ra, rb) for ra, rb in zip(a, b)]
    else:
        values = [topn_kendall_distance(ra, rb, top_n, p=p) for ra, rb in zip(a, b)]
    return float(np.mean(values))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=30, unique=True), st.randoms())
def test_matches_scipy_kendalltau_without_ties(x, rnd):
    y = list(x)
    rnd.shuffle(y)
    x, y = np.array(x), np.array(y)  # a permutation of distinct values: no ties
    tau = kendalltau(x, y).statistic
    assert kendall_tau_distance(x, y) == pytest.approx((1 - tau) / 2, abs=1e-12)


def test_closed_forms():
    x = np.arange(6.0)
    assert kendall_tau_distance(x, x) == 0.0
    assert kendall_tau_distance(x, -x) == 1.0
    # one adjacent swap = 1 discordant pair out of 15
    assert kendall_tau_distance(x, np.array([1, 0, 2, 3, 4, 5.0])) == pytest.approx(1 / 15)


def test_ties_are_not_discordant():
    # pair (0,1) is tied in y (not discordant); pairs (0,2) and (1,2) are discordant -> 2/3
    assert kendall_tau_distance([1, 2, 3], [5, 5, 4]) == pytest.approx(2 / 3)
    assert kendall_tau_distance([1, 1, 1], [3, 2, 1]) == 0.0


def test_fagin_identical_and_disjoint_lists():
    x = np.array([9, 8, 7, 0, 0, 0, 0.0])
    y = np.array([0, 0, 0, 0, 7, 8, 9.0])
    assert topn_kendall_distance(x, x, 3) == 0.0
    assert topn_kendall_distance(x, y, 3) == pytest.approx(1.0)  # disjoint lists reach the maximum
    assert topn_kendall_distance(x, y, 3, normalize=False, p=0.5) == pytest.approx(9 + 0.5 * 6)


def test_fagin_hand_computed_example():
    """tau1 = (a, b, c), tau2 = (a, c, d) over words a..d (indices 0..3).

    Pairs: {a,b}: b absent from tau2, a ranked above b in both -> 0; {a,c}: both lists a > c -> 0;
    {a,d}: d absent from tau1, a above d in tau2 -> 0; {b,c}: c in both, b only in tau1, tau1 ranks b
    above c -> 1; {b,d}: b only in tau1, d only in tau2 -> 1; {c,d}: d absent from tau1, tau2 ranks c
    above d -> 0. K^(p) = 2 (no pair is absent from one list entirely) for every p."""
    x = np.array([3, 2, 1, 0.0])
    y = np.array([3, 0, 2, 1.0])
    for p in (0.0, 0.5, 1.0):
        assert topn_kendall_distance(x, y, 3, p=p, normalize=False) == pytest.approx(2.0)
    assert topn_kendall_distance(x, y, 3) == pytest.approx(2 / (9 + 0.5 * 6))


def test_fagin_same_members_equals_discordant_count():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.permutation(10) + 10, np.zeros(5)])
    y = np.concatenate([rng.permutation(10) + 10, np.zeros(5)])
    k = topn_kendall_distance(x, y, 10, normalize=False)
    tau = kendalltau(x[:10], y[:10]).statistic
    assert k == pytest.approx(45 * (1 - tau) / 2)


def test_case_four_penalty_p():
    """Both items of tau1's tail absent from tau2: one pair penalised by p."""
    x = np.array([4, 3, 2, 1, 0, 0.0])  # top-2: (0, 1)
    y = np.array([0, 0, 0, 0, 2, 1.0])  # top-2: (4, 5)
    for p in (0.0, 0.5, 1.0):
        assert topn_kendall_distance(x, y, 2, p=p, normalize=False) == pytest.approx(4 + 2 * p)


def test_mean_over_topics():
    W = np.array([[3, 2, 1.0], [1, 2, 3.0]])
    V = np.array([[3, 2, 1.0], [3, 2, 1.0]])
    assert mean_kendall_distance(V, W) == pytest.approx(0.5)
    assert mean_kendall_distance(V, W, top_n=1) == pytest.approx(0.5)
