"""Sensitivity of the minibatch sufficient statistics (Park et al. Eq. 4) checked by brute force: replace
or add one document in a tiny corpus and measure how much the statistics move."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp._validation import check_int
from topicdp.baselines import cap_document_lengths, sstats_sensitivity
from topicdp.inference import batch_e_step, dirichlet_expectation


def document_sstats(X, exp_elog_beta, alpha, **kwargs):
    """Per-document S_d (K x V each), to check the sensitivity bound by brute force on tiny corpora."""
    return [batch_e_step(X[i], exp_elog_beta, alpha, **kwargs)[1] for i in range(X.shape[0])]


V, N = 3, 3  # vocabulary size and document-length cap
# topic 0 concentrated on word 0, topic 1 on word 1: phi becomes nearly one-hot, the worst case of Eq. 4
LAMBDA = np.array([[200.0, 0.01, 1.0], [0.01, 200.0, 1.0]])
EXP_ELOG_BETA = np.exp(dirichlet_expectation(LAMBDA))
BASE = np.array([[1, 1, 1], [0, 2, 0], [2, 0, 1], [0, 0, 1]], dtype=float)


def all_documents(max_len=N):
    """Every bag of words of length 1..max_len over V words."""
    docs = []
    for length in range(1, max_len + 1):
        for combo in itertools.combinations_with_replacement(range(V), length):
            docs.append(np.bincount(combo, minlength=V).astype(float))
    return docs


def sstats(rows):
    return batch_e_step(sp.csr_matrix(np.asarray(rows)), EXP_ELOG_BETA, 0.5, max_iter=200, tol=1e-10)[1]


def test_statistics_decompose_over_documents_and_have_mass_l_d():
    X = sp.csr_matrix(BASE)
    per_doc = document_sstats(X, EXP_ELOG_BETA, 0.5, max_iter=200, tol=1e-10)
    np.testing.assert_allclose(sum(per_doc), sstats(BASE), atol=1e-10)
    np.testing.assert_allclose([s.sum() for s in per_doc], BASE.sum(axis=1))


def test_replace_one_brute_force_within_sqrt2_n_and_above_papers_n():
    base = sstats(BASE)
    changes = []
    for doc in all_documents():
        rows = BASE.copy()
        rows[0] = doc
        changes.append(np.linalg.norm(sstats(rows) - base))
    # replacing document 0 by every possible document, and every pair of replacements
    worst = 0.0
    candidates = [sstats(np.vstack([doc, BASE[1:]])) for doc in all_documents()]
    for a, b in itertools.combinations(candidates, 2):
        worst = max(worst, np.linalg.norm(a - b))
    bound = sstats_sensitivity(N, "replace-one")
    assert bound == pytest.approx(math.sqrt(2) * N)
    assert max(changes) <= bound * (1 + 1e-12) and worst <= bound * (1 + 1e-12)
    # Eq. 4's N (for the sum) is exceeded: the paper's bound is too small for replace-one
    assert worst > N
    assert worst > 0.97 * bound  # and sqrt(2) N is nearly attained


def test_add_remove_brute_force_within_n():
    base = sstats(BASE)
    changes = [np.linalg.norm(sstats(np.vstack([BASE, doc])) - base) for doc in all_documents()]
    assert sstats_sensitivity(N, "add-remove") == N
    assert max(changes) <= N * (1 + 1e-12)  # attained up to rounding by N copies of word 0
    assert max(changes) > 0.97 * N


def paper_sensitivity(doc_length_cap: int, n_docs: int) -> float:
    """Park et al. 2016 Eq. 4 as printed: Delta s-bar <= N / D for the statistics averaged over D documents (moved here
    from topicdp.baselines.sensitivity: only this test used it)."""
    return check_int(doc_length_cap, "doc_length_cap", low=1) / check_int(n_docs, "n_docs", low=1)


def test_paper_sensitivity_is_n_over_d():
    assert paper_sensitivity(100, 400) == pytest.approx(0.25)


@pytest.mark.parametrize("policy", ["subsample", "scale"])
def test_length_cap(policy):
    X = sp.csr_matrix(np.array([[5, 3, 0, 2], [1, 1, 0, 0], [0, 7, 7, 0]]))
    capped, n_capped = cap_document_lengths(X, 4, policy=policy, random_state=0)
    assert n_capped == 2
    np.testing.assert_allclose(capped.sum(axis=1).A.ravel(), [4, 2, 4])
    assert np.all(capped.toarray() <= X.toarray() + 1e-12)
    np.testing.assert_array_equal(capped[1].toarray(), X[1].toarray())  # short documents untouched
    if policy == "scale":
        np.testing.assert_allclose(capped[0].toarray(), X[0].toarray() * 0.4)
    else:
        assert np.allclose(capped.data, np.round(capped.data))


def test_length_cap_rejects_bad_arguments():
    with pytest.raises(ValueError, match="doc_length_cap"):
        cap_document_lengths(sp.csr_matrix(np.ones((2, 2))), 0)
    with pytest.raises(ValueError, match="length_policy"):
        cap_document_lengths(sp.csr_matrix(np.ones((2, 2))), 1, policy="truncate")
