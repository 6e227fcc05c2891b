"""Sensitivity bounds of the spectral backend against brute-force searches over neighbouring corpora.

Every bound is checked in the norm a mechanism is calibrated to: Frobenius for the Gaussian releases,
entry-wise l1 for Laplace releases. The searches print the worst ratio found (change / bound); run with
``-s`` to see them: ``python -m pytest tests/test_spectral_sensitivity.py -q -s``.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.spectral.moments import M2Operator, prepare_corpus, whitened_m3
from topicdp.spectral.procedure1 import laplace_bound
from topicdp.spectral.moments import lda_coefficients
from topicdp.spectral.sensitivity import (delta_m2, delta_m3, jennrich_sensitivity,
                                          whitened_tensor_sensitivity)
from topicdp.spectral.tensor import apply_vv, eigengaps, jennrich



def delta_m3_paper(n_docs: int, alpha0: float) -> float:
    """App. H.2 of the spectral paper as printed, ``2/N + 4|b|/N + 6c (N-1)/(N(N-2))`` -- *not* an upper bound (misses B2, B3)."""
    _, b, c = lda_coefficients(alpha0)
    N = float(n_docs)
    return 2.0 / N + 4.0 * abs(b) / N + 6.0 * c * (N - 1.0) / (N * (N - 2.0))


def _moments(X, alpha0, users=None, n_units=None):
    c = prepare_corpus(sp.csr_matrix(X), users=users, n_units=n_units)
    return M2Operator(c, alpha0).dense(), whitened_m3(c, alpha0, np.eye(X.shape[1]))


def _ratios(A, B, n, alpha0):
    """Change of (M2, M3) over each bound: l1 and Frobenius."""
    (M2a, M3a), (M2b, M3b) = A, B
    return np.array([np.abs(M2a - M2b).sum() / delta_m2(n, alpha0, norm="l1"),
                     np.linalg.norm(M2a - M2b) / delta_m2(n, alpha0, norm="fro"),
                     np.abs(M3a - M3b).sum() / delta_m3(n, alpha0, norm="l1"),
                     np.linalg.norm(M3a - M3b) / delta_m3(n, alpha0, norm="fro")])


@pytest.mark.parametrize("alpha0", [0.5, 1.0, 5.0])
@pytest.mark.parametrize("n_docs", [4, 9])
def test_worst_case_neighbours_attain_corrected_bounds(alpha0, n_docs):
    """Other documents on disjoint word sets, the replaced one a repeated word: the change of M3_hat
    equals (2 + 12|b| + 6c)/N, above App. H.2's printed bound (which omits B2 and B3)."""
    N = n_docs
    d = 3 * (N - 1) + 2
    D = np.zeros((N, d))
    for n in range(1, N):
        D[n, 3 * (n - 1):3 * n] = 1
    D[0, d - 2] = 3
    D2 = D.copy()
    D2[0] = 0
    D2[0, d - 1] = 3
    M2a, M3a = _moments(D, alpha0)
    M2b, M3b = _moments(D2, alpha0)
    ch3 = np.abs(M3a - M3b).sum()
    assert ch3 <= delta_m3(N, alpha0, norm="l1") * (1 + 1e-12)
    assert ch3 >= delta_m3(N, alpha0, norm="l1") * (1 - 1e-12)  # tight
    assert ch3 > delta_m3_paper(N, alpha0) * 1.1      # the printed bound is violated
    assert np.abs(M2a - M2b).sum() <= delta_m2(N, alpha0, norm="l1") * (1 + 1e-12)
    assert np.linalg.norm(M3a - M3b) <= delta_m3(N, alpha0, norm="fro")


def _vertex_configurations():
    """The vertices of the hull H0 (module docstring of ``sensitivity``): (A, p) = (sym(e_u e_v^T), (e_u + e_v)/2)
    and the zero unit (0, 0), exact rationals, over 5 word labels (enough for every coincidence pattern of
    u, v, s, t, z)."""
    d = 5
    verts = [([[Fraction(0)] * d for _ in range(d)], [Fraction(0)] * d)]  # a unit without a usable document
    for u in range(d):
        for v in range(u, d):
            A = [[Fraction(0)] * d for _ in range(d)]
            A[u][v] += Fraction(1, 2)
            A[v][u] += Fraction(1, 2)
            p = [Fraction(0)] * d
            p[u] += Fraction(1, 2)
            p[v] += Fraction(1, 2)
            verts.append((A, p))
    return d, verts


def test_m2_frobenius_bound_by_vertex_enumeration():
    """Computer-assisted proof of ||X||_F^2 <= 2 + 4a^2 on a in [0, 1] (sensitivity module docstring):
    for each vertex configuration, ||X||_F^2 = al + be a + ga a^2 exactly; check max over [0, 1] of
    (al - 2) + be a + (ga - 4) a^2 <= 0 at the endpoints and at the parabola's vertex, in rationals.
    The vertices include the zero unit, for either unit, and r = 0 (every other unit without a usable
    document; z = None)."""
    d, verts = _vertex_configurations()
    assert len(verts) == 16  # 15 (u <= v) and the zero unit
    worst_at_half = zero_at_half = Fraction(0)
    for (A, p), (B, q) in itertools.product(verts, verts):
        delta = [p[i] - q[i] for i in range(d)]
        for z in [*range(d), None]:
            # X = C - a D with C = A - B and D = delta r^T + r delta^T, r = e_z (or 0)
            C = [[A[i][j] - B[i][j] for j in range(d)] for i in range(d)]
            D = [[delta[i] * (j == z) + (i == z) * delta[j] for j in range(d)] for i in range(d)]
            al = sum(C[i][j] ** 2 for i in range(d) for j in range(d))
            be = -2 * sum(C[i][j] * D[i][j] for i in range(d) for j in range(d))
            ga = sum(D[i][j] ** 2 for i in range(d) for j in range(d))
            f = lambda a: (al - 2) + be * a + (ga - 4) * a * a  # noqa: E731
            points = [Fraction(0), Fraction(1)]
            if ga != 4:
                top = -be / (2 * (ga - 4))
                if 0 <= top <= 1:
                    points.append(top)
            assert max(f(a) for a in points) <= 0
            worst_at_half = max(worst_at_half, al + be / 2 + ga / 4)
            if not any(p) or not any(q):
                zero_at_half = max(zero_at_half, al + be / 2 + ga / 4)
    assert worst_at_half == 3  # attained: 2 + 4 (1/2)^2
    # a replacement by (or of) a unit without a usable document: at most 1 + 2a^2, half the squared bound
    # (A = e_w e_w^T, r = e_u, u != w); the bound itself is attained by two usable units
    assert zero_at_half == Fraction(3, 2)


def _patterns(n):
    """Restricted growth strings of length n: one label tuple per coincidence pattern (Bell(n) of them)."""
    out = [[0]]
    for _ in range(n - 1):
        out = [p + [x] for p in out for x in range(max(p) + 2)]
    return out


def _e(i, d):
    v = np.zeros(d, dtype=np.int64)
    v[i] = 1
    return v


#: which of (A, p), (B, q), Q, r is the zero vertex (a unit, or all other units, without a usable document)
_ZEROS4 = list(itertools.product((1, 0), repeat=4))


def _m3_middle_vertices():
    """``(4 sym3(Z), zero flags)`` for every vertex configuration of ``Z = (A - B) (x) r + Q (x) delta``: the 877
    coincidence patterns of the 7 labels u, v, s, t, e, f, z, each with any of (A, p), (B, q), Q, r at the zero
    vertex (entries scaled by 4 so that they are integers)."""
    d = 7
    for u, v, s, t, e, f, z in _patterns(7):
        for ka, kb, kq, kr in _ZEROS4:
            A2, B2, Q2 = (k * (np.outer(_e(i, d), _e(j, d)) + np.outer(_e(j, d), _e(i, d)))
                          for k, (i, j) in ((ka, (u, v)), (kb, (s, t)), (kq, (e, f))))
            delta2 = ka * (_e(u, d) + _e(v, d)) - kb * (_e(s, d) + _e(t, d))
            Z4 = np.einsum("ab,c->abc", A2 - B2, 2 * kr * _e(z, d)) + np.einsum("ab,c->abc", Q2, delta2)  # 4 Z
            yield Z4 + Z4.transpose(0, 2, 1) + Z4.transpose(2, 1, 0), (ka, kb, kq, kr)


def _m3_last_vertices():
    """``(P, zero flags)``, P the three placements of ``delta (x) R`` at every vertex configuration: labels u, v
    (``delta = e_u - e_v``) and x, y (``R = e_x e_y^T``), with p, q or R at the zero vertex."""
    d = 4
    for u, v, x, y in _patterns(4):
        for kp, kq, kR in itertools.product((1, 0), repeat=3):
            dl, R = kp * _e(u, d) - kq * _e(v, d), kR * np.outer(_e(x, d), _e(y, d))
            P = np.einsum("a,bc->abc", dl, R) + np.einsum("b,ac->abc", dl, R) + np.einsum("c,ab->abc", dl, R)
            yield P, (kp, kq, kR)


def test_m3_frobenius_constants_by_vertex_enumeration():
    """The constants 42 and 12 of the M3 Frobenius bound (sensitivity module docstring), exactly in integers
    (everything scaled by 2 so that the vertices ``sym(e_u e_v^T)``, ``(e_u + e_v)/2`` are integral), over the
    hulls with the zero vertex (units without a usable document): the constants are unchanged, and with a
    zero vertex anywhere the maxima are smaller."""
    assert len(_patterns(7)) == 877 and len(_patterns(4)) == 15
    best, best_with_zero = 0, 0
    for S4, flags in _m3_middle_vertices():
        value = int((S4 * S4).sum())
        best = max(best, value)
        if 0 in flags:
            best_with_zero = max(best_with_zero, value)
    assert Fraction(best, 16) == 42  # max ||sym3(Z)||_F^2
    assert Fraction(best_with_zero, 16) == 36  # e.g. A = 0, B = Q = e_s e_s^T, r = e_s: sym3(Z) = -6 e_s^{x3}
    best, best_with_zero = 0, 0
    for P, flags in _m3_last_vertices():
        value = int((P * P).sum())
        best = max(best, value)
        if 0 in flags:
            best_with_zero = max(best_with_zero, value)
    assert best == 12 and best_with_zero == 9
    a0 = 1.0
    _, b, c = lda_coefficients(a0)
    assert delta_m3(10, a0, norm="fro") < math.sqrt(2) * (1 + 6 * abs(b) + 3 * c) / 10  # the triangle bound


def test_l1_bounds_by_vertex_enumeration():
    """The l1 constants over the hulls with the zero vertex, exactly: M2's ``||X||_1 <= 2 + 4a`` jointly (``||X||_1``
    is convex in a, so a = 0 and a = 1 suffice), and M3's per-term ``||sym3(Z)||_1 <= 12`` and ``||delta (x) R +
    [R_ac delta_b] + [R_bc delta_a]||_1 <= 6`` (``||T - T'||_1 <= 2`` needs no enumeration: entry sums <= 1).
    All are attained without zero units, so the zero vertex leaves the l1 bounds as they were."""
    d, verts = _vertex_configurations()
    worst = {Fraction(0): Fraction(0), Fraction(1): Fraction(0)}
    for (A, p), (B, q) in itertools.product(verts, verts):
        delta = [p[i] - q[i] for i in range(d)]
        for z in [*range(d), None]:
            for a in worst:
                l1 = sum(abs(A[i][j] - B[i][j] - a * (delta[i] * (j == z) + (i == z) * delta[j]))
                         for i in range(d) for j in range(d))
                assert l1 <= 2 + 4 * a
                worst[a] = max(worst[a], l1)
    assert worst == {0: 2, 1: 6}
    assert max(int(np.abs(S4).sum()) for S4, _ in _m3_middle_vertices()) == 4 * 12
    assert max(int(np.abs(P).sum()) for P, _ in _m3_last_vertices()) == 6


@pytest.mark.parametrize("alpha0", [0.3, 1.0, 4.0])
def test_m2_frobenius_bound_is_attained(alpha0):
    """Documents "www" -> "vvv", every other document "uuu": ||M2 - M2'||_F = sqrt(2 + 4a^2)/N exactly."""
    N = 6
    D = np.zeros((N, 3))
    D[0, 0] = 3
    D[1:, 2] = 3
    D2 = D.copy()
    D2[0] = [0, 3, 0]
    (M2a, _), (M2b, _) = _moments(D, alpha0), _moments(D2, alpha0)
    assert math.isclose(np.linalg.norm(M2a - M2b), delta_m2(N, alpha0, norm="fro"), rel_tol=1e-12)
    a, _, _ = lda_coefficients(alpha0)
    assert delta_m2(N, alpha0, norm="fro") < (math.sqrt(2) + math.sqrt(6) * a) / N  # the triangle bound


def _search(rng, n_trials, d=4, alpha0=1.0, users=False):
    """Worst ratios over (i) every replacement of unit 0 by one document of length 3-4 on random and on
    concentrated corpora and (ii) a hill climb over whole neighbouring pairs; at user level unit 0 owns 1-3
    documents and is replaced by 1-3 other documents (any counts: the relation per-user weighting covers)."""
    cands = [np.array(v) for v in itertools.product(range(5), repeat=d) if 3 <= sum(v) <= 4]

    def pair_ratio(D, D2, owners, owners2):
        n = len(set(owners)) if users else D.shape[0]
        return _ratios(_moments(D, alpha0, owners if users else None),
                       _moments(D2, alpha0, owners2 if users else None), n, alpha0)

    def random_pair():
        n_other = int(rng.integers(2, 6))
        k1, k2 = (int(rng.integers(1, 4)), int(rng.integers(1, 4))) if users else (1, 1)
        if rng.random() < 0.5:  # concentrated others: every other unit writes the same word
            other = np.zeros((n_other, d))
            other[:, int(rng.integers(d))] = 3
        else:
            other = np.array([cands[i] for i in rng.integers(len(cands), size=n_other)])
        mine = np.array([cands[i] for i in rng.integers(len(cands), size=k1)])
        theirs = np.array([cands[i] for i in rng.integers(len(cands), size=k2)])
        owners_other = list(np.arange(1, n_other + 1)) if users else []
        return (np.vstack([mine, other]), np.vstack([theirs, other]),
                [0] * k1 + owners_other, [0] * k2 + owners_other)

    worst = np.zeros(4)
    for _ in range(n_trials):
        D, D2, o1, o2 = random_pair()
        best = pair_ratio(D, D2, o1, o2)
        for _ in range(30):  # hill climb on the Frobenius ratios: mutate one row of either corpus
            E, E2 = D.copy(), D2.copy()
            i = int(rng.integers(D.shape[0]))
            if i < o1.count(0) or rng.random() < 0.5:
                target = E if i < o1.count(0) else E2
                j = i if i < o1.count(0) else int(rng.integers(o2.count(0)))
                target[j] = cands[int(rng.integers(len(cands)))]
            else:
                row = cands[int(rng.integers(len(cands)))]
                E[i] = row
                E2[o2.count(0) + i - o1.count(0)] = row
            r = pair_ratio(E, E2, o1, o2)
            if r[1] + r[3] > best[1] + best[3]:
                D, D2, best = E, E2, r
        worst = np.maximum(worst, best)
    return worst


def test_brute_force_search_never_exceeds_bounds():
    """Document level: random and concentrated tiny corpora, every single-document replacement, hill climbs."""
    d, alpha0 = 4, 1.0
    cands = [np.array(v) for v in itertools.product(range(5), repeat=d) if 3 <= sum(v) <= 4]
    rng = np.random.default_rng(0)
    worst = np.zeros(4)
    for trial in range(12):
        N = int(rng.integers(3, 7))
        D = np.array([cands[i] for i in rng.integers(len(cands), size=N)]) if trial else np.array([[0, 0, 0, 3]] * 5)
        N = D.shape[0]
        base = _moments(D, alpha0)
        for c in cands:
            D2 = D.copy()
            D2[0] = c
            worst = np.maximum(worst, _ratios(base, _moments(D2, alpha0), N, alpha0))
    worst = np.maximum(worst, _search(np.random.default_rng(1), 40))
    print(f"\ndocument level, worst change/bound: M2 l1 {worst[0]:.3f}, M2 Frobenius {worst[1]:.3f}, "
          f"M3 l1 {worst[2]:.3f}, M3 Frobenius {worst[3]:.3f}")
    assert np.all(worst <= 1 + 1e-12)
    assert worst[0] > 0.75 and worst[1] > 0.99  # the M2 Frobenius bound is attained (single-word documents)
    assert worst[3] > 0.3  # the search does get near the M3 bound (reported, not tight)


def test_user_level_brute_force_search_never_exceeds_bounds():
    """Replace-one-user with any document counts (1-3 -> 1-3) under per-user weighting: bounds in U."""
    worst = _search(np.random.default_rng(2), 60, users=True)
    print(f"\nuser level, worst change/bound: M2 l1 {worst[0]:.3f}, M2 Frobenius {worst[1]:.3f}, "
          f"M3 l1 {worst[2]:.3f}, M3 Frobenius {worst[3]:.3f}")
    assert np.all(worst <= 1 + 1e-12)
    assert worst[1] > 0.9 and worst[3] > 0.3


#: rows without a third-order estimator: the empty document (all words out of vocabulary) and 1-2 tokens
_UNUSABLE = [np.array(v) for v in itertools.product(range(3), repeat=4) if sum(v) <= 2]
_USABLE = [np.array(v) for v in itertools.product(range(5), repeat=4) if 3 <= sum(v) <= 4]


def _exhaustive_with_unusable_rows(alpha0):
    """Document level, n stated: on corpora whose other documents are usable, concentrated, or partly unusable,
    every replacement of document 0 in which the old or the new document is unusable (empty or 1-2 tokens)."""
    pool = _UNUSABLE + _USABLE
    others = [np.array([[0, 0, 0, 3]] * 4),                       # every other document "uuu"
              np.array([[0, 0, 0, 3], [0, 0, 0, 3], [0, 0, 0, 0], [0, 1, 0, 0]]),  # half of them unusable
              np.array([[0, 0, 0, 0]] * 2 + [[0, 0, 0, 3]]),      # one usable document besides document 0
              np.array([[0, 0, 0, 0], [1, 1, 0, 0]]),             # no usable document besides document 0
              np.array([[1, 1, 1, 0], [0, 2, 0, 2], [3, 0, 0, 1], [0, 0, 0, 0], [0, 0, 1, 1]])]
    worst = np.zeros(4)
    for other in others:
        n = other.shape[0] + 1
        moments = [_moments(np.vstack([row, other]), alpha0, n_units=n) for row in pool]
        for i, j in itertools.product(range(len(pool)), repeat=2):
            if i < len(_UNUSABLE) or j < len(_UNUSABLE):
                worst = np.maximum(worst, _ratios(moments[i], moments[j], n, alpha0))
    return worst


def _search_with_unusable_units(rng, n_trials, users, alpha0=1.0):
    """Hill climbs over neighbouring pairs with units that have no usable document (n stated): unit 0 is replaced
    by, or replaces, a unit whose documents are all empty or shorter than 3 tokens (1-3 documents at user level),
    and other units are unusable too with probability 0.4."""
    def draw(pool):
        return pool[int(rng.integers(len(pool)))]

    def unit_rows(usable):
        k = int(rng.integers(1, 4)) if users else 1
        return [draw(_USABLE if usable else _UNUSABLE) for _ in range(k)]

    def ratio(mine, theirs, other, owners_other):
        n = 1 + (len(set(owners_other)) if users else len(other))
        D, D2 = np.vstack(mine + other), np.vstack(theirs + other)
        o1, o2 = ([0] * len(mine) + owners_other, [0] * len(theirs) + owners_other) if users else (None, None)
        return _ratios(_moments(D, alpha0, o1, n), _moments(D2, alpha0, o2, n), n, alpha0)

    worst = np.zeros(4)
    for _ in range(n_trials):
        n_other = int(rng.integers(2, 6))
        concentrated = rng.random() < 0.5
        other, owners_other = [], []
        for u in range(1, n_other + 1):
            rows = unit_rows(rng.random() > 0.4)
            if concentrated and sum(rows[0]) >= 3:
                rows = [np.array([0, 0, 0, 3])] * len(rows)
            other += rows
            owners_other += [u] * len(rows)
        usable_first = rng.random() < 0.5  # usable -> unusable, or unusable -> anything
        mine, theirs = unit_rows(usable_first), unit_rows(not usable_first and rng.random() < 0.7)
        best = ratio(mine, theirs, other, owners_other)
        for _ in range(30):  # mutate one document of the replaced unit's two versions, or of another unit
            m2, t2, o2 = list(mine), list(theirs), list(other)
            which = rng.integers(3)
            if which == 0:
                m2[int(rng.integers(len(m2)))] = draw(_USABLE if usable_first else _UNUSABLE)
            elif which == 1:
                t2[int(rng.integers(len(t2)))] = draw(_UNUSABLE + _USABLE)
            else:
                o2[int(rng.integers(len(o2)))] = draw(_UNUSABLE + _USABLE)
            if not (any(sum(r) < 3 for r in m2) and all(sum(r) < 3 for r in m2)
                    or all(sum(r) < 3 for r in t2)):
                continue  # keep an unusable unit on one side
            r = ratio(m2, t2, o2, owners_other)
            if r[1] + r[3] > best[1] + best[3]:
                mine, theirs, other, best = m2, t2, o2, r
        worst = np.maximum(worst, best)
    return worst


@pytest.mark.parametrize("alpha0", [0.5, 1.0, 5.0])
def test_brute_force_with_units_without_usable_documents(alpha0):
    """Replace-one with n stated, where the old or the new unit has no usable document (every document empty,
    i.e. out of vocabulary, or shorter than 3 tokens) and other units may have none either: the change of
    M2 and M3 never exceeds the bounds in n. Exhaustive at document level, hill climbs at both levels."""
    worst_doc = np.maximum(_exhaustive_with_unusable_rows(alpha0),
                           _search_with_unusable_units(np.random.default_rng(3), 25, users=False, alpha0=alpha0))
    worst_user = _search_with_unusable_units(np.random.default_rng(4), 25, users=True, alpha0=alpha0)
    for level, worst in (("document", worst_doc), ("user", worst_user)):
        print(f"\n{level} level, a unit without usable documents (alpha0 = {alpha0}), worst change/bound: "
              f"M2 l1 {worst[0]:.3f}, M2 Frobenius {worst[1]:.3f}, M3 l1 {worst[2]:.3f}, M3 Frobenius {worst[3]:.3f}")
        assert np.all(worst <= 1 + 1e-12)
    # M2 Frobenius reaches 1/sqrt(2) of the bound, the most a replacement involving a zero unit can (vertex
    # enumeration above: 1 + 2a^2 against 2 + 4a^2); the M3 searches reach about a sixth to a third
    assert worst_doc[1] > 0.7 and worst_user[1] > 0.6 and min(worst_doc[3], worst_user[3]) > 0.15


def test_user_level_bound_fails_without_weighting():
    """Why the weighting: unweighted documents of a user replaced by more documents move M2 far beyond
    the per-user bound (the old group-privacy route covered only equal counts)."""
    D = np.zeros((8, 3))
    D[:, 2] = 3
    D[0] = [3, 0, 0]
    D2 = np.vstack([[[0, 3, 0]] * 4, D[1:]])  # user 0: one "aaa" document -> four "bbb" documents
    owners, owners2 = [0] + list(range(1, 8)), [0] * 4 + list(range(1, 8))
    weighted = np.linalg.norm(_moments(D, 1.0, owners)[0] - _moments(D2, 1.0, owners2)[0])
    assert weighted <= delta_m2(8, 1.0, norm="fro")
    unweighted = np.linalg.norm(_moments(D, 1.0)[0] - _moments(D2, 1.0)[0])  # documents as units, N changes too
    assert unweighted > 1.5 * delta_m2(8, 1.0, norm="fro")


@pytest.mark.parametrize("unit", ["document", "user"])
def test_whitened_tensor_sensitivity_given_public_whitening(unit):
    """||T - T'||_F <= Delta3_F / lambda_k^{3/2} for a fixed W; at user level user 0 (1-3 documents) is
    replaced by 1-3 other documents."""
    rng = np.random.default_rng(1)
    d, k, alpha0 = 6, 3, 1.0
    U, _ = np.linalg.qr(rng.standard_normal((d, k)))
    lam = np.array([0.3, 0.1, 0.02])
    W = U / np.sqrt(lam)
    cands = [np.array(v) for v in itertools.product(range(4), repeat=d) if sum(v) == 3]
    worst = 0.0
    for trial in range(6):
        n_units, mine = 5, (1 if unit == "document" else int(rng.integers(1, 4)))
        D = np.array([cands[i] for i in rng.integers(len(cands), size=n_units - 1 + mine)])
        owners = [0] * mine + list(range(1, n_units))
        users = None if unit == "document" else owners
        Ta = whitened_m3(prepare_corpus(sp.csr_matrix(D), users=users), alpha0, W)
        for c in cands[::3]:
            theirs = 1 if unit == "document" else int(rng.integers(1, 4))
            D2 = np.vstack([[c] + [cands[i] for i in rng.integers(len(cands), size=theirs - 1)], D[mine:]])
            users2 = None if unit == "document" else [0] * theirs + owners[mine:]
            Tb = whitened_m3(prepare_corpus(sp.csr_matrix(D2), users=users2), alpha0, W)
            worst = max(worst, np.linalg.norm(Ta - Tb)
                        / whitened_tensor_sensitivity(delta_m3(n_units, alpha0, norm="fro"), lam[-1]))
    print(f"\nwhitened tensor ({unit} level), worst change/bound (Frobenius): {worst:.3f}")
    assert 0.05 < worst <= 1 + 1e-12


def test_jennrich_release_sensitivity():
    """||[T(I,v_i,v_i)] - [T'(I,v_i',v_i')]||_F <= sqrt(k) ||T - T'||_F (1 + 2^{5/2} ||T||_F / gap) for
    perturbations of a nearly orthogonally decomposable T (random and eigen-gap-targeted directions)."""
    rng = np.random.default_rng(2)
    k = 4
    V, _ = np.linalg.qr(rng.standard_normal((k, k)))
    T = np.einsum("j,aj,bj,cj->abc", [3.0, 2.5, 2.0, 1.5], V, V, V)
    T += 0.05 * rng.standard_normal((k, k, k))
    T = (T + T.transpose(0, 2, 1) + T.transpose(1, 0, 2) + T.transpose(1, 2, 0) + T.transpose(2, 0, 1)
         + T.transpose(2, 1, 0)) / 6
    theta = rng.standard_normal(k)
    theta /= np.linalg.norm(theta)
    dec, rho = jennrich(T, theta)
    gap = float(np.min(eigengaps(rho)))
    w = apply_vv(T, dec.vectors)
    worst = 0.0
    for scale in (1e-4, 1e-3, 1e-2, 3e-2):
        for _ in range(200):
            E = rng.standard_normal((k, k, k))
            E = (E + E.transpose(0, 2, 1) + E.transpose(1, 0, 2) + E.transpose(1, 2, 0) + E.transpose(2, 0, 1)
                 + E.transpose(2, 1, 0)) / 6
            E *= scale / np.linalg.norm(E)
            dec2, _ = jennrich(T + E, theta)
            w2 = apply_vv(T + E, dec2.vectors)
            bound = jennrich_sensitivity(scale, gap, np.linalg.norm(T), k)
            worst = max(worst, np.linalg.norm(w - w2) / bound)
    assert 0.005 < worst <= 1.0


def test_laplace_bound_fails_with_probability_delta():
    """P[lower > value] = delta exactly: with n = 200 000 draws the empirical rate has s.d. 4.9e-4 at
    delta = 0.05; we allow 5 s.d."""
    rng = np.random.default_rng(3)
    n, delta = 200_000, 0.05
    fails = sum(laplace_bound("q", 1.0, 0.5, 2.0, delta, rng).bound > 1.0 for _ in range(n))
    assert abs(fails / n - delta) < 5 * np.sqrt(delta * (1 - delta) / n)
    up = laplace_bound("q", 1.0, 0.5, 2.0, delta, rng, side="upper")
    assert up.bound > up.noisy
