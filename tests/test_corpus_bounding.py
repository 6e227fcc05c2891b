"""Contribution bounding is a per-unit function.

Changing one user (or one document) must leave what is kept of every other user bit-identical when both
corpora are bounded with the same seed; otherwise the neighbour relation a DP release is calibrated to does
not hold after bounding.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topicdp.corpus import Corpus
from topicdp.spectral.sensitivity import delta_m2

V = 6
VOCAB = [f"w{i}" for i in range(V)]


def _corpus(records) -> Corpus:
    """records: list of (user id, count row) in corpus order."""
    X = sp.csr_matrix(np.array([row for _, row in records], dtype=np.int64).reshape(len(records), V))
    return Corpus.from_matrix(X, VOCAB, [u for u, _ in records])


def _rows_by_user(corpus: Corpus) -> dict:
    """user id -> the user's bounded rows, in corpus order, as a hashable tuple."""
    dense = corpus.X.toarray()
    return {
        corpus.user_ids[u]: tuple(tuple(dense[d].tolist()) for d in docs)
        for u, docs in enumerate(corpus.user_documents())
    }


# -- the property -------------------------------------------------------------------------------------

rows = st.lists(st.integers(0, 6), min_size=V, max_size=V).filter(lambda r: sum(r) > 0)
user_ids = st.one_of(st.integers(0, 5), st.sampled_from(["a", "b", "c", "ü"]), st.tuples(st.integers(0, 2)))
records = st.lists(st.tuples(user_ids, rows), min_size=1, max_size=25)


@st.composite
def neighbours(draw):
    """A corpus and its neighbour: one user's documents added, removed or changed (or the user added/removed)."""
    recs = draw(records)
    users = list(dict.fromkeys(u for u, _ in recs))
    target = draw(st.sampled_from(users + ["new user"]))
    mine = [i for i, (u, _) in enumerate(recs) if u == target]
    change = draw(st.sampled_from(["add", "remove", "modify", "drop user"]) if mine else st.just("add"))
    other = list(recs)
    if change == "add":
        for _ in range(draw(st.integers(1, 3))):
            other.insert(draw(st.integers(0, len(other))), (target, draw(rows)))
    elif change == "remove":
        del other[draw(st.sampled_from(mine))]
    elif change == "modify":
        i = draw(st.sampled_from(mine))
        # long rows cross max_tokens_per_doc (<= 12 below) in one direction or the other
        other[i] = (target, draw(st.one_of(rows, st.lists(st.integers(4, 9), min_size=V, max_size=V))))
    else:
        other = [r for r in other if r[0] != target]
    if not other:  # a corpus needs a document: give the neighbour one of a fresh user
        other = [("only", [1] * V)]
    return recs, other, target


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(neighbours(), st.integers(1, 4), st.one_of(st.none(), st.integers(1, 12)), st.one_of(st.none(), st.integers(1, 40)),
       st.integers(0, 2**64))
def test_changing_one_user_leaves_every_other_user_identical(pair, m, L, T, seed):
    recs, other, target = pair
    a = _rows_by_user(_corpus(recs).bound(m, L, random_state=seed, max_tokens_per_user=T))
    b = _rows_by_user(_corpus(other).bound(m, L, random_state=seed, max_tokens_per_user=T))
    for user in set(a) & set(b) - {target}:
        assert a[user] == b[user], f"user {user!r} changed when only {target!r} did"


@settings(max_examples=100, deadline=None)
@given(st.lists(rows, min_size=2, max_size=15), st.data(), st.integers(1, 12), st.integers(0, 2**32))
def test_document_level_truncation_depends_on_the_document_alone(docs, data, L, seed):
    """One document per unit (ids = positions, as from_matrix makes them): removing one document renumbers
    every later one, and still every other document keeps the same tokens."""
    i = data.draw(st.integers(0, len(docs) - 1))
    full = Corpus.from_matrix(np.array(docs), VOCAB).bound(max_tokens_per_doc=L, random_state=seed).X.toarray()
    less = Corpus.from_matrix(np.array(docs[:i] + docs[i + 1:]), VOCAB)
    less = less.bound(max_tokens_per_doc=L, random_state=seed).X.toarray()
    assert np.array_equal(np.delete(full, i, axis=0), less)


# -- the per-user token bound --------------------------------------------------------------------------


def _kept_in_order(kept_rows, rows) -> bool:
    """Each kept row is, cell by cell, at most one of ``rows``, in the same order (emptied rows dropped)."""
    source = iter(rows)
    return all(any(all(a <= b for a, b in zip(row, src)) for src in source) for row in kept_rows)


@settings(max_examples=200, deadline=None)
@given(records, st.integers(1, 40), st.integers(0, 2**32))
def test_token_bound_keeps_a_sub_multiset_of_at_most_T_tokens_and_logs_the_rest(recs, T, seed):
    corpus = _corpus(recs)
    bounded = corpus.bound(random_state=seed, max_tokens_per_user=T)
    before, after = _rows_by_user(corpus), _rows_by_user(bounded)
    assert set(after) == set(before)  # every user keeps a token, so no user disappears
    cut = capped = 0
    for user, rows_before in before.items():
        n = sum(map(sum, rows_before))
        kept_rows = [r for r in rows_before if any(r)]
        mine = after[user]
        if n <= T:
            assert mine == tuple(kept_rows)  # a user within the bound is untouched
            continue
        capped, cut = capped + 1, cut + n - T
        assert sum(map(sum, mine)) == T and _kept_in_order(mine, rows_before)
    log = bounded.log
    assert (log.users_token_capped, log.tokens_cut_by_max_tokens_per_user) == (capped, cut)
    assert log.max_tokens_per_user == T
    assert bounded.n_docs + log.documents_emptied_by_max_tokens_per_user == corpus.n_docs


def test_token_bound_draws_uniformly_among_the_users_tokens():
    """Each cell's kept count is hypergeometric with mean T c / n. Over 4,000 seeds the mean of each cell is
    within 5 standard errors of it (the hypergeometric variance T (c/n) (1 - c/n) (n - T) / (n - 1), divided by
    4,000): a bound from the distribution, about 6e-7 two-sided per cell if the draw is uniform."""
    rows_ = [[5, 0, 1, 0, 0, 2], [0, 3, 0, 0, 7, 0], [1, 1, 1, 1, 1, 1]]
    corpus = _corpus([("u", r) for r in rows_])
    counts = np.array(rows_, dtype=float).ravel()
    n, T, seeds = counts.sum(), 19, 4000  # cutting 5 of 24 tokens cannot empty a row (the smallest has 6)
    total = np.zeros_like(counts)
    for seed in range(seeds):
        bounded = corpus.bound(random_state=seed, max_tokens_per_user=T)
        total += bounded.X.toarray().ravel()
    p = counts / n
    se = np.sqrt(T * p * (1 - p) * (n - T) / (n - 1) / seeds)
    mean = total / seeds
    assert np.all(np.abs(mean - T * p) <= 5 * se + 1e-12)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "10"])
def test_token_bound_refuses_bad_values(bad):
    with pytest.raises((ValueError, TypeError), match="max_tokens_per_user"):
        _corpus([("u", [1] * V)]).bound(random_state=0, max_tokens_per_user=bad)


# -- the review's evidence, as a regression test ------------------------------------------------------


def _m2(X: sp.csr_matrix, alpha0: float) -> np.ndarray:
    """Dense M2_hat of the spectral method (Eqs. 2-9 of the spectral paper, as in
    tests/spectral_reference.explicit_moments), written out with vectors instead of loops so that N = 1200 documents
    stay cheap."""
    Xd = X.toarray().astype(float)
    N = Xd.shape[0]
    a = alpha0 / (alpha0 + 1.0)
    lengths = Xd.sum(axis=1)
    m1 = Xd / lengths[:, None]
    w = 1.0 / (lengths * (lengths - 1.0))
    pairs = (Xd * w[:, None]).T @ Xd - np.diag((Xd * w[:, None]).sum(axis=0))
    S = m1.sum(axis=0)
    cross = np.outer(S, S) - m1.T @ m1
    return pairs / N - a / (N * (N - 1)) * cross


def _evidence_corpora():
    """60 users x 30 documents, m = 20; user 0 has 20 documents in D and 21 in D' (N = 1200 both ways)."""
    rng = np.random.default_rng(2026)
    n_users, n_docs, vocab = 60, 30, 40
    X = rng.poisson(1.0, size=(n_users * n_docs, vocab)) + (rng.random((n_users * n_docs, vocab)) < 0.05) * 40
    X[:, 0] += 3  # every document has at least 3 tokens (M2 divides by l (l - 1))
    users = np.repeat(np.arange(n_users), n_docs)
    words = [f"v{i}" for i in range(vocab)]
    keep_d = np.ones(users.size, dtype=bool)
    keep_d[20:30] = False  # user 0: documents 0..19
    keep_n = keep_d.copy()
    keep_n[20] = True  # user 0: documents 0..20
    return (Corpus.from_matrix(X[keep_d], words, users[keep_d]),
            Corpus.from_matrix(X[keep_n], words, users[keep_n]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_issue_evidence_one_extra_document_redraws_nobody_else(seed):
    d, d_prime = _evidence_corpora()
    m, L, alpha0 = 20, 60, 1.0
    bd, bn = d.bound(m, L, random_state=seed), d_prime.bound(m, L, random_state=seed)
    a, b = _rows_by_user(bd), _rows_by_user(bn)
    changed = [u for u in a if u != 0 and a[u] != b[u]]
    assert changed == []  # the code before the fix re-drew 59 of the 59 other users
    assert bd.n_docs == bn.n_docs == 1200
    # DPSpectralMoments's user-level calibration: replacing one user moves at most m documents, so
    # ||M2(D) - M2(D')||_1 <= m * Delta2(N) (group privacy over Thm. 4's replace-one-document bound);
    # the review measured 2.07 x this bound before the fix
    diff = np.abs(_m2(bd.X, alpha0) - _m2(bn.X, alpha0)).sum()
    assert diff <= m * delta_m2(1200, alpha0, norm="l1")


def test_issue_evidence_one_document_crossing_the_token_cap_redraws_no_other_document():
    d, _ = _evidence_corpora()
    L = 60
    lengths = np.asarray(d.X.sum(axis=1)).ravel()
    short = int(np.flatnonzero(lengths <= L)[0])
    X = d.X.tolil()
    X[short, 1] = X[short, 1] + L  # this document now crosses max_tokens_per_doc
    crossed = Corpus(X=X.tocsr(), vocabulary=d.vocabulary, doc_users=d.doc_users, user_ids=d.user_ids)
    a = d.bound(max_tokens_per_doc=L, random_state=5).X.toarray()
    b = crossed.bound(max_tokens_per_doc=L, random_state=5).X.toarray()
    others = np.arange(d.n_docs) != short
    assert (lengths[others] > L).sum() > 100  # many other documents are truncated...
    assert np.array_equal(a[others], b[others])  # ...and none of them re-drawn


# -- the seed -----------------------------------------------------------------------------------------


def test_default_seed_is_fresh_and_a_given_seed_reproduces():
    d, _ = _evidence_corpora()
    assert _rows_by_user(d.bound(5, random_state=3)) == _rows_by_user(d.bound(5, random_state=3))
    # 59 users keep 5 of 30 documents: two fresh seeds agree with probability C(30,5)^-59, i.e. never
    assert _rows_by_user(d.bound(5)) != _rows_by_user(d.bound(5))
    assert _rows_by_user(d.bound(5, random_state=3)) != _rows_by_user(d.bound(5, random_state=4))
    gen = d.bound(5, random_state=np.random.default_rng(1))
    assert _rows_by_user(gen) == _rows_by_user(d.bound(5, random_state=np.random.default_rng(1)))


def test_kept_documents_are_a_uniform_subset():
    """Each of a user's 5 documents is kept with probability m/n = 2/5. Over 4000 seeds the frequency has
    standard deviation sqrt(0.4 * 0.6 / 4000) = 0.0077; 0.04 is more than 5 of them."""
    X = np.eye(5, dtype=np.int64) + 1
    c = Corpus.from_matrix(X, VOCAB[:5], ["u"] * 5)
    kept = np.zeros(5)
    for seed in range(4000):
        b = c.bound(max_docs_per_user=2, random_state=seed)
        kept[np.argmax(b.X.toarray() == 2, axis=1)] += 1  # the identity entry names the document
    assert np.all(np.abs(kept / 4000 - 0.4) < 0.04), kept / 4000


def test_user_keys_do_not_depend_on_the_process_hash_seed(tmp_path):
    """Python's hash() of a str changes between processes; bounding by user id must not."""
    code = (
        "import numpy as np; from topicdp.corpus import Corpus;"
        "X = np.arange(1, 1 + 40 * 4).reshape(40, 4) % 7 + 1;"
        "c = Corpus.from_matrix(X, ['a', 'b', 'c', 'd'], [f'user{i % 4}' for i in range(40)]);"
        "print(c.bound(3, 9, random_state=11).fingerprint())"
    )
    root = Path(__file__).resolve().parents[1]
    outs = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        outs.add(subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                                check=True).stdout)
    assert len(outs) == 1


@pytest.mark.parametrize("bad, match", [(-1, "random_state"), (1.5, "random_state"), ("x", "random_state")])
def test_bad_seeds_are_refused(bad, match):
    c = Corpus.from_matrix(np.ones((2, 2), dtype=int), ["a", "b"])
    with pytest.raises((TypeError, ValueError), match=match):
        c.bound(1, random_state=bad)


def test_user_ids_of_an_unsupported_type_are_refused():
    c = Corpus.from_matrix(np.ones((3, 2), dtype=int), ["a", "b"], users=[frozenset({1}), frozenset({1}), 2])
    with pytest.raises(TypeError, match="user ids"):
        c.bound(1, random_state=0)
