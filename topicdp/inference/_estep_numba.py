"""Compiled serial kernels of the per-document E-step (optional: numba, the ``fast`` extra): the numpy engine's
iteration (:mod:`.estep`) one document at a time, each loop reading only its own counts, the topics and its gamma.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def digamma(x: float) -> float:
    """psi(x) for x > 0: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic series
    log x - 1/(2x) - sum_n B_2n / (2n x^2n) to n = 7 (Abramowitz & Stegun 6.3.5 and 6.3.18); truncation
    error below 1e-13 relative to scipy.special.digamma on (0, inf)."""
    r = 0.0
    while x < 6.0:
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132
                                                                 + f * (691.0 / 32760 + f * (-1.0 / 12)))))))
    return r + math.log(x) - 0.5 / x + t


@njit(cache=True, nogil=True, fastmath=True)
def gamma_iterations(data, indices, indptr, beta_t, alpha, gamma, max_iter, tol, n_iter):  # pragma: no cover
    """Iterate every document's gamma (rows of ``gamma``, in place) on its own; ``n_iter[d]`` counts document d's
    updates (0 without nonzeros). Its topic columns are first copied into a contiguous K x n_d block for both sums.
    """
    n_docs, k = gamma.shape
    exp_elog_theta = np.empty(k)
    longest = 0
    for d in range(n_docs):
        longest = max(longest, indptr[d + 1] - indptr[d])
    block = np.empty((k, longest))  # beta_kv for the words v of the current document
    ratios = np.empty(longest)  # c_dv / sum_k exp(E log theta_dk) beta_kv
    for d in range(n_docs):
        lo, hi = indptr[d], indptr[d + 1]
        m = hi - lo
        n_iter[d] = 0
        if m == 0:
            continue
        for n in range(m):
            v = indices[lo + n]
            for j in range(k):
                block[j, n] = beta_t[v, j]
        for it in range(max_iter):
            total = 0.0
            for j in range(k):
                total += gamma[d, j]
            psi_total = digamma(total)
            for j in range(k):
                exp_elog_theta[j] = math.exp(digamma(gamma[d, j]) - psi_total)
            for n in range(m):
                ratios[n] = 1e-100  # no 0/0 on underflow, as in the numpy engine
            for j in range(k):
                e = exp_elog_theta[j]
                for n in range(m):
                    ratios[n] += e * block[j, n]
            for n in range(m):
                ratios[n] = data[lo + n] / ratios[n]
            change = 0.0
            for j in range(k):
                acc = 0.0
                for n in range(m):
                    acc += ratios[n] * block[j, n]
                new = alpha[j] + exp_elog_theta[j] * acc
                change += abs(new - gamma[d, j])
                gamma[d, j] = new
            n_iter[d] = it + 1
            if change / k < tol:
                break


@njit(cache=True, nogil=True)
def weighted_statistics(data, indices, indptr, beta_t, gamma, row_weights, out_t):  # pragma: no cover
    """out_t[v, k] += w_d c_dv exp(E log theta_dk) beta_kv / sum_j exp(E log theta_dj) beta_jv for every
    document d (phi from the final gamma; Hoffman et al. 2010's sufficient statistics), transposed (V x K)."""
    n_docs, k = gamma.shape
    exp_elog_theta = np.empty(k)
    for d in range(n_docs):
        lo, hi = indptr[d], indptr[d + 1]
        if lo == hi:
            continue
        total = 0.0
        for j in range(k):
            total += gamma[d, j]
        psi_total = digamma(total)
        for j in range(k):
            exp_elog_theta[j] = math.exp(digamma(gamma[d, j]) - psi_total)
        for n in range(lo, hi):
            v = indices[n]
            norm = 1e-100
            for j in range(k):
                norm += exp_elog_theta[j] * beta_t[v, j]
            ratio = row_weights[d] * data[n] / norm
            for j in range(k):
                out_t[v, j] += ratio * exp_elog_theta[j] * beta_t[v, j]
