"""Dense references for the spectral method's moments (tiny d and N only): the loops of DeCarolis et al. 2020,
Eqs. 2-9, and the population moments of Lemma 3, which tests check the implicit estimators of
:mod:`topicdp.spectral.moments` against. Not part of the package."""

from __future__ import annotations

import numpy as np

from topicdp.spectral.moments import lda_coefficients, prepare_corpus


def explicit_moments(X, alpha0: float, users=None, n_units: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense ``(M1_hat, M2_hat, M3_hat)`` straight from Eqs. 2-9 by loops over documents (tiny d, N only).

    An independent implementation for tests: per-document estimators are built from the definitions
    and the U-statistics by summing over distinct index tuples explicitly (O(N^3 d^3)). With ``users``,
    each user's estimators are first averaged over its documents and the users play the documents' part.
    With ``n_units``, the units without a usable document are appended as explicit zero statistics until
    there are ``n_units`` of them, and the loops run over all of them (module docstring, "Zero units").
    """
    corpus = prepare_corpus(X, users=users, n_units=n_units)
    a, b, c = lda_coefficients(alpha0)
    Xd = corpus.X.toarray()
    d = Xd.shape[1]
    m1, m2, m3 = [], [], []
    eye = np.eye(d)
    for cn in Xd:
        l = cn.sum()
        m1.append(cn / l)
        m2.append((np.outer(cn, cn) - np.diag(cn)) / (l * (l - 1)))
        t = np.einsum("i,j,k->ijk", cn, cn, cn)
        cc = np.outer(cn, cn)
        pair = np.einsum("ij,ia,ib,jc->abc", cc, eye, eye, eye)  # sum_ij c_i c_j e_i e_i e_j
        t -= pair + pair.transpose(0, 2, 1) + pair.transpose(2, 1, 0)
        t += 2 * np.einsum("i,ia,ib,ic->abc", cn, eye, eye, eye)
        m3.append(t / (l * (l - 1) * (l - 2)))
    if corpus.units is not None:  # per-user means of the per-document estimators
        groups = [np.flatnonzero(corpus.units == u) for u in range(corpus.n_used)]
        m1, m2, m3 = ([np.mean([m[i] for i in g], axis=0) for g in groups] for m in (m1, m2, m3))
    m1 = list(m1) + [np.zeros(d)] * corpus.n_empty
    m2 = list(m2) + [np.zeros((d, d))] * corpus.n_empty
    m3 = list(m3) + [np.zeros((d, d, d))] * corpus.n_empty
    N = len(m1)
    M1 = np.mean(m1, axis=0)
    cross2 = sum(np.outer(m1[n], m1[m]) for n in range(N) for m in range(N) if n != m)
    M2 = np.mean(m2, axis=0) - a / (N * (N - 1)) * cross2
    B1 = sum(np.einsum("ab,c->abc", m2[n], m1[m]) for n in range(N) for m in range(N) if n != m)
    B = B1 + B1.transpose(0, 2, 1) + B1.transpose(2, 1, 0)
    cube = sum(np.einsum("a,b,c->abc", m1[n], m1[m], m1[p])
               for n in range(N) for m in range(N) for p in range(N) if len({n, m, p}) == 3)
    M3 = np.mean(m3, axis=0) + b / (N * (N - 1)) * B + c / (N * (N - 1) * (N - 2)) * cube
    return M1, M2, M3


def population_moments(topic_word: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lemma 3 (standard constants): ``M1 = sum w_i mu_i``, ``M2 = sum alpha_i/(a0(a0+1)) mu_i mu_i^T``,
    ``M3 = sum 2 alpha_i/(a0(a0+1)(a0+2)) mu_i^{x3}`` (dense; small d only)."""
    mu = np.asarray(topic_word, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    a0 = alpha.sum()
    M1 = (alpha / a0) @ mu
    M2 = (mu.T * (alpha / (a0 * (a0 + 1)))) @ mu
    M3 = np.einsum("i,ia,ib,ic->abc", 2 * alpha / (a0 * (a0 + 1) * (a0 + 2)), mu, mu, mu)
    return M1, M2, M3
