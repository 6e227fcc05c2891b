"""The fast E-step engines against the E-step they replaced (``tests/estep_reference.py``).

Both engines (numpy in blocks, numba per document) run the reference's iteration: the same start
alpha + N_d / K, the same update (Blei, Ng & Jordan 2003 Eqs. 6-7; Hoffman, Blei & Bach 2010, Alg. 2) and
the same per-document stopping rule (mean |change of gamma_d| < tol). They differ only in the order of
floating-point sums (a few ulps per update). The tolerance that follows from the stopping rule: a
document whose results differ by more than rounding must have had its stopping test flipped by rounding,
and then the two runs differ by the one extra update, whose mean absolute size is below ``tol`` (it
passed the test) — so every document's mean |gamma_new - gamma_ref| <= tol + rounding, and the
documents that stopped alike (all of them here) agree to rounding (``ROUNDING`` relative).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import digamma as scipy_digamma

import estep_reference as reference
from topicdp.datasets import synthetic_lda
from topicdp.inference import estep
from topicdp.inference.estep import _document_gamma, batch_e_step, document_gamma, resolve_engine
from topicdp.metrics.recovery import recovery_error
from topicdp.variational import DPVariationalEM

ROUNDING = 1e-9  # relative: a few ulps per update, compounded over <= a few hundred updates, is far below
HAS_NUMBA = estep._numba_kernels() is not None
ENGINES = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(not HAS_NUMBA, reason="numba not installed"))]


def random_problem(seed: int, n_docs: int = 60, n_words: int = 40, k: int = 4):
    """Sparse counts (some fractional, some empty rows), random topics, an asymmetric or symmetric alpha."""
    rng = np.random.default_rng(seed)
    dense = rng.poisson(rng.choice([0.1, 0.5, 2.0]), size=(n_docs, n_words)).astype(float)
    dense[rng.random(n_docs) < 0.1] = 0.0  # empty documents
    if seed % 2:
        dense *= rng.choice([1.0, 0.37], size=dense.shape)  # fractional counts (length capping)
    beta = rng.gamma(rng.choice([0.1, 1.0]), 1.0, size=(k, n_words)) + 1e-6
    beta /= beta.sum(axis=1, keepdims=True)
    alpha = rng.gamma(1.0, 0.3, size=k) if seed % 3 == 0 else 1.0 / k
    return sp.csr_matrix(dense), beta, alpha, rng.uniform(0.05, 1.0, size=n_docs)


def assert_same_iteration(new: np.ndarray, old: np.ndarray, tol: float) -> None:
    """Every document within the stopping rule's bound, and the documents that stopped alike to rounding."""
    per_doc = np.abs(new - old).mean(axis=1)
    assert np.all(per_doc <= tol + ROUNDING * (1 + np.abs(old).max())), per_doc.max()
    alike = per_doc <= ROUNDING * (1 + np.abs(old).max(axis=1))
    assert alike.mean() >= 0.99  # a flip needs a change within rounding of tol: none expected


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("max_iter, tol", [(100, 1e-3), (7, 1e-3), (500, 1e-8)])
def test_engine_matches_the_reference_e_step(engine, seed, max_iter, tol):
    X, beta, alpha, weights = random_problem(seed)
    gamma_ref, S_ref = reference.batch_e_step(X, beta, alpha, max_iter=max_iter, tol=tol, row_weights=weights)
    gamma, S = batch_e_step(X, beta, alpha, max_iter=max_iter, tol=tol, row_weights=weights, engine=engine)
    assert_same_iteration(gamma, gamma_ref, tol)
    np.testing.assert_allclose(S, S_ref, rtol=ROUNDING, atol=ROUNDING * S_ref.max())
    # the identity behind the sensitivity bound: column v sums to the weighted count of word v
    np.testing.assert_allclose(S.sum(axis=0), np.asarray(X.multiply(weights[:, None]).sum(axis=0)).ravel(),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(document_gamma(X, beta, alpha, max_iter=max_iter, tol=tol, engine=engine),
                               reference.document_gamma(X, beta, alpha, max_iter=max_iter, tol=tol),
                               rtol=ROUNDING, atol=tol)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_document_does_not_depend_on_the_rest_of_its_batch(engine):
    """Permuting the batch, dropping documents or adding others leaves each document's gamma and S_d as they were."""
    X, beta, alpha, weights = random_problem(3, n_docs=80)
    other, _, _, _ = random_problem(4, n_docs=50)
    gamma, _ = batch_e_step(X, beta, alpha, engine=engine)
    rng = np.random.default_rng(0)
    order = rng.permutation(X.shape[0])
    np.testing.assert_allclose(batch_e_step(X[order], beta, alpha, engine=engine)[0], gamma[order], rtol=1e-12)
    bigger = sp.vstack([other, X, other]).tocsr()
    np.testing.assert_allclose(batch_e_step(bigger, beta, alpha, engine=engine)[0][50:130], gamma, rtol=1e-12)
    for d in (0, 7, 41):  # alone, with a weight: its S_d is its share of the batch's statistic
        g_d, S_d = batch_e_step(X[d], beta, alpha, row_weights=weights[d:d + 1], engine=engine)
        np.testing.assert_allclose(g_d[0], gamma[d], rtol=1e-12)
        without = np.delete(np.arange(X.shape[0]), d)
        S_all = batch_e_step(X, beta, alpha, row_weights=weights, engine=engine)[1]
        S_rest = batch_e_step(X[without], beta, alpha, row_weights=weights[without], engine=engine)[1]
        np.testing.assert_allclose(S_all - S_rest, S_d, atol=1e-10)


@pytest.mark.parametrize("engine", ENGINES)
def test_warm_start_is_per_document_and_reaches_the_same_fixed_point(engine):
    X, beta, alpha, _ = random_problem(5, n_docs=80)
    cold, n_cold = _document_gamma(X, beta, alpha, max_iter=5000, tol=1e-12, engine=engine)
    start = np.random.default_rng(1).gamma(1.0, 5.0, size=cold.shape) + 0.01
    warm, _ = _document_gamma(X, beta, alpha, max_iter=5000, tol=1e-12, gamma0=start, engine=engine)
    np.testing.assert_allclose(warm, cold, rtol=1e-6)  # one fixed point per document here, reached from both
    # a document started at its own fixed point stops after one update; empty documents keep alpha
    again, n_again = _document_gamma(X, beta, alpha, max_iter=50, tol=1e-6, gamma0=cold, engine=engine)
    assert np.all(n_again[n_cold > 0] == 1) and np.all(n_again[n_cold == 0] == 0)
    np.testing.assert_allclose(again[n_cold == 0], np.broadcast_to(alpha, again[n_cold == 0].shape))
    # document d's result depends on its own row of gamma0 only
    order = np.random.default_rng(2).permutation(X.shape[0])
    short = _document_gamma(X[order], beta, alpha, max_iter=20, tol=1e-3, gamma0=start[order], engine=engine)[0]
    full = _document_gamma(X, beta, alpha, max_iter=20, tol=1e-3, gamma0=start, engine=engine)[0]
    np.testing.assert_allclose(short, full[order], rtol=1e-12)
    with pytest.raises(ValueError, match="gamma0"):
        document_gamma(X, beta, alpha, gamma0=start[:3], engine=engine)


@pytest.mark.skipif(not HAS_NUMBA, reason="numba not installed")
def test_numba_digamma_matches_scipy():
    from topicdp.inference._estep_numba import digamma

    x = np.concatenate([np.logspace(-4, 6, 2001), [0.1, 0.5, 1.0, 5.999, 6.0, 6.001]])
    ours = np.array([digamma(v) for v in x])
    np.testing.assert_allclose(ours, scipy_digamma(x), rtol=1e-13, atol=1e-13)


@pytest.mark.skipif(not HAS_NUMBA, reason="numba not installed")
def test_the_two_engines_agree_on_a_synthetic_corpus():
    data = synthetic_lda(400, 300, 5, random_state=0)
    beta = np.random.default_rng(0).dirichlet(np.full(300, 0.5), size=5)
    X = sp.csr_matrix(data.X, dtype=float)
    w = np.random.default_rng(1).uniform(0.05, 0.2, size=X.shape[0])
    g_np, S_np = batch_e_step(X, beta, 0.2, max_iter=50, row_weights=w, engine="numpy")
    g_nb, S_nb = batch_e_step(X, beta, 0.2, max_iter=50, row_weights=w, engine="numba")
    assert_same_iteration(g_nb, g_np, 1e-3)
    np.testing.assert_allclose(S_nb, S_np, rtol=ROUNDING, atol=ROUNDING * S_np.max())


def test_engine_choice(monkeypatch):
    assert resolve_engine("numpy") == "numpy"
    with pytest.raises(ValueError, match="engine must be one of"):
        resolve_engine("cython")
    monkeypatch.setenv("TOPICDP_ESTEP_ENGINE", "numpy")
    assert resolve_engine(None) == "numpy" and resolve_engine("auto") == "numpy"
    monkeypatch.setattr(estep, "_numba_module", False)  # as if numba were missing
    monkeypatch.delenv("TOPICDP_ESTEP_ENGINE")
    assert resolve_engine(None) == "numpy"
    with pytest.raises(ImportError, match=r'pip install "topicdp\[fast\]"'):
        resolve_engine("numba")


@pytest.mark.filterwarnings("ignore:DPVariationalEM.fit")  # the same data fitted once per engine, on purpose
def test_dp_vem_recovery_is_that_of_the_reference_e_step(monkeypatch):
    """The fit (random start, noise, fixed seeds) recovers the synthetic topics as well as with the old E-step.

    Bound: the engines make the old arithmetic up to rounding (above), the noise draws are the same (same
    seed), so the released topics can differ only through rounding carried through T = 5 passes; a
    difference of 1e-6 in mean L1 would already be ten orders above it. The fit itself must also be a
    recovery at all: below the error of topics that ignore the data (uniform rows).
    """
    data = synthetic_lda(1500, 200, 5, random_state=3)
    uniform = recovery_error(np.full((5, 200), 1 / 200), data.topic_word)
    errors = {}
    for name in ("reference", "numpy", *(["numba"] if HAS_NUMBA else [])):
        if name == "reference":
            monkeypatch.setattr("topicdp.variational.batch_e_step",
                                lambda *a, engine=None, **kw: reference.batch_e_step(*a, **kw))
        else:
            monkeypatch.undo()
            monkeypatch.setenv("TOPICDP_ESTEP_ENGINE", name)
        model = DPVariationalEM(5, epsilon=3.0, unit="document", n_iterations=5, random_state=0).fit(data.X)
        errors[name] = recovery_error(model.topic_word_, data.topic_word)
    for name, error in errors.items():
        assert error <= errors["reference"] + 1e-6, errors
    assert errors["reference"] < uniform, (errors, uniform)
