"""The Matrix-Variate Gaussian (MVG) mechanism (Chanyaswad, Dytso, Poor & Mittal, "MVG mechanism: differential
privacy under matrix-valued query", CCS 2018), TopicDP's second baseline (Wang et al. 2022, Sec. 4.2).

``MVG(f(X)) = f(X) + Z``, ``vec(Z) ~ N(0, Psi ⊗ Sigma)`` (row covariance Sigma, m x m; column covariance Psi,
n x n), sampled as ``A N B^T`` with ``A A^T = Sigma``, ``B B^T = Psi``. It is (epsilon, delta)-DP if (Theorem 3)

    ||sigma(Sigma^-1)||_2 ||sigma(Psi^-1)||_2 <= P = (-beta + sqrt(beta^2 + 8 alpha epsilon))^2 / (4 alpha^2),
    alpha = (H_r + H_{r,1/2}) gamma^2 + 2 H_r gamma s_2,   beta = 2 (m n)^{1/4} H_r s_2 zeta(delta),
    zeta(delta) = sqrt(2 sqrt(-m n ln delta) - 2 ln delta + m n),

with ``r = min(m, n)``, generalised harmonic numbers ``H``, ``gamma = sup_X ||f(X)||_F`` and ``s_2`` the Frobenius
sensitivity. ``zeta`` is the Laurent-Massart (1 - delta) bound on ``||N||_F``, the square-rooted form (the form
for a norm; the authors' code has carried both). The condition is sufficient and loose. Theorem 3 holds for any
m x n, so rectangular matrices are accepted (TopicDP used m = n). For rows non-negative summing to at most 1,
``||f(X)||_F^2 <= sum ||w_i||_1^2 <= m``, so ``gamma = sqrt(m)`` is the default (checked; otherwise give gamma).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from .._validation import check_delta, check_epsilon, check_option, check_random_state, check_real
from ..rdp.ledger import ApproxEntry
from ..report import NEIGHBOURS, UNITS, Check, ReportParts, compose_report, total


@dataclass(frozen=True)
class MVGConstants:
    """The constants of CCS 2018 Theorem 3 for one (m, n, epsilon, delta, s_2, gamma)."""

    m: int
    n: int
    r: int
    harmonic: float  # H_r
    harmonic_half: float  # H_{r,1/2}
    zeta: float
    alpha: float
    beta: float
    precision_budget: float


def generalized_harmonic(r: int, order: float) -> float:
    """H_{r,order} = sum_{i=1}^r i^(-order)."""
    return float(np.sum(np.arange(1, r + 1, dtype=float) ** (-order)))


def mvg_constants(shape: tuple[int, int], epsilon: float, delta: float, sensitivity: float, gamma: float) -> MVGConstants:
    """alpha, beta, zeta(delta) and the precision budget P of CCS 2018 Theorem 3 (module docstring), for the
    Frobenius ``sensitivity`` s_2 and ``gamma = sup_X ||f(X)||_F``."""
    m, n = (int(v) for v in shape)
    if m < 1 or n < 1:
        raise ValueError(f"shape must be two positive integers, got {shape}")
    eps = check_epsilon(epsilon)
    s2 = check_real(sensitivity, "sensitivity", low=0.0)
    gamma = check_real(gamma, "gamma", low=0.0)
    r = min(m, n)
    h, h_half = generalized_harmonic(r, 1.0), generalized_harmonic(r, 0.5)
    t = -math.log(check_delta(delta))  # zeta(delta): the Laurent-Massart bound on ||N||_F (module docstring)
    zeta = math.sqrt(2.0 * math.sqrt(m * n * t) + 2.0 * t + m * n)
    alpha = (h + h_half) * gamma**2 + 2.0 * h * gamma * s2
    beta = 2.0 * (m * n) ** 0.25 * h * s2 * zeta
    budget = (-beta + math.sqrt(beta**2 + 8.0 * alpha * eps)) ** 2 / (4.0 * alpha**2)
    return MVGConstants(m, n, r, h, h_half, zeta, alpha, beta, budget)


def precision_norm(row_cov, col_cov) -> float:
    """||sigma(Sigma^-1)||_2 ||sigma(Psi^-1)||_2, the left-hand side of Theorem 3 (the singular values of an SPD
    matrix's inverse are the reciprocals of its eigenvalues)."""
    row, col = (np.linalg.norm(1.0 / np.linalg.eigvalsh(_check_spd(cov, name)))
                for cov, name in ((row_cov, "row_cov"), (col_cov, "col_cov")))
    return float(row * col)


def _check_spd(cov, name: str) -> np.ndarray:
    cov = np.asarray(cov, dtype=float)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or not np.all(np.isfinite(cov)):
        raise ValueError(f"{name} must be a finite square matrix")
    if not np.allclose(cov, cov.T, rtol=1e-10, atol=1e-12):
        raise ValueError(f"{name} must be symmetric")
    if np.linalg.eigvalsh(cov).min() <= 0:
        raise ValueError(f"{name} must be positive definite (Theorem 3 needs its inverse)")
    return cov


def mvg_iid_sigma(shape: tuple[int, int], epsilon: float, delta: float, sensitivity: float, gamma: float) -> float:
    """Per-entry sd of the i.i.d. MVG (Sigma = I, Psi = s^2 I) meeting Theorem 3 with equality: ``s = (mn)^{1/4} / sqrt(P)``."""
    c = mvg_constants(shape, epsilon, delta, sensitivity, gamma)
    return (c.m * c.n) ** 0.25 / math.sqrt(c.precision_budget)


def scale_to_budget(row_cov, col_cov, constants: MVGConstants) -> tuple[np.ndarray, np.ndarray]:
    """``(Sigma, c Psi)`` with ``c = precision_norm(Sigma, Psi) / P``: the noise's directions kept, Theorem 3 met with
    equality (the left-hand side scales as 1/c)."""
    row_cov, col_cov = _check_spd(row_cov, "row_cov"), _check_spd(col_cov, "col_cov")
    c = precision_norm(row_cov, col_cov) / constants.precision_budget
    return row_cov, c * col_cov


def _sqrt_psd(cov: np.ndarray) -> np.ndarray:
    w, V = np.linalg.eigh(cov)
    return V * np.sqrt(np.clip(w, 0.0, None))


def sample_mvg(row_cov, col_cov, *, size: int | None = None, random_state=None) -> np.ndarray:
    """Draw ``Z ~ MVG_{m,n}(0, Sigma, Psi)`` as ``A N B^T`` (CCS 2018, Sec. 3); ``size`` draws give shape (size, m, n)."""
    A = _sqrt_psd(_check_spd(row_cov, "row_cov"))
    B = _sqrt_psd(_check_spd(col_cov, "col_cov"))
    rng = check_random_state(random_state)
    N = rng.standard_normal((1 if size is None else size, A.shape[0], B.shape[0]))
    Z = A @ N @ B.T
    return Z[0] if size is None else Z


def _default_gamma(W: np.ndarray) -> tuple[float, Check]:
    if not bool(np.all(W >= 0) and np.all(W.sum(axis=1) <= 1 + 1e-9)):
        raise ValueError("gamma=None assumes rows with non-negative entries summing to at most 1 (then gamma = "
                         "sqrt(m)); this matrix is not of that kind, so pass gamma = sup_X ||f(X)||_F explicitly")
    return math.sqrt(W.shape[0]), Check("rows non-negative with sums <= 1 (gamma = sqrt(m))", True, "needed for the "
                                        "default gamma = sup ||f(X)||_F = sqrt(m); pass gamma explicitly otherwise")


def mvg_release(W, epsilon: float, delta: float, sensitivity: float, *, gamma: float | None = None, row_cov=None,
                col_cov=None, unit: str = "user", neighbours: str = "add-remove",
                sensitivity_method: str = "global bound", random_dp_gamma: float | None = None, vocabulary=None,
                random_state=None, ledger=None):
    """Release ``W + Z`` with Z ~ MVG(0, Sigma, Psi) calibrated by CCS 2018 Theorem 3; returns a PrivateRelease
    (``noisy`` is W + Z, ``topic_word`` its rows on the simplex).

    ``sensitivity`` is the Frobenius sensitivity for the stated ``unit`` and ``neighbours``; ``gamma`` (sup_X
    ||f(X)||_F) defaults to sqrt(m), checked; ``row_cov``, ``col_cov`` give the noise's directions, rescaled by
    :func:`scale_to_budget` (default i.i.d., :func:`mvg_iid_sigma`); ``random_dp_gamma``, a sampled sensitivity's
    failure probability, makes the report random-DP; ``vocabulary`` are public column labels; a ``ledger`` is
    checked before the noise and records one approx entry after (the mechanism has no RDP curve).
    """
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or not np.all(np.isfinite(W)):
        raise ValueError("W must be a finite 2-D array")
    check_option(unit, "unit", UNITS)
    check_option(neighbours, "neighbours", NEIGHBOURS)
    checks = []
    if gamma is None:
        gamma, check = _default_gamma(W)
        checks.append(check)
    c = mvg_constants(W.shape, epsilon, delta, sensitivity, gamma)
    entries = [] if ledger is None else [ApproxEntry("mvg", float(epsilon), float(delta), gamma=random_dp_gamma,
                                                     unit=unit, neighbours=neighbours)]
    if ledger is not None:
        ledger.check(entries)
    rng = check_random_state(random_state)
    if (row_cov is None) != (col_cov is None):
        raise ValueError("row_cov and col_cov must be given together")
    if row_cov is None:
        s = mvg_iid_sigma(W.shape, epsilon, delta, sensitivity, gamma)
        noisy = W + s * rng.standard_normal(W.shape)
        shape_note = f"i.i.d. noise, Sigma = I_m, Psi = {s:.6g}^2 I_n"
    else:
        row_cov, col_cov = scale_to_budget(row_cov, col_cov, c)
        noisy = W + sample_mvg(row_cov, col_cov, random_state=rng)
        s = None
        shape_note = "directional noise: given Sigma, Psi rescaled to the precision budget"
    checks.append(Check("Theorem 3 condition", True,
                        f"precision budget P = {c.precision_budget:.6g} met with equality"))
    report = _report(c, epsilon, delta, sensitivity, gamma, s, unit, neighbours, sensitivity_method,
                     random_dp_gamma, random_state is not None, checks, shape_note)
    from ..private_release import PrivateRelease
    from .postprocess import to_simplex

    vocabulary = tuple(str(j) for j in range(W.shape[1])) if vocabulary is None else tuple(vocabulary)
    if ledger is not None:
        ledger.record(entries)
    return PrivateRelease(topic_word=to_simplex(noisy)[0], noisy=noisy, vocabulary=vocabulary, report=report)


def _report(c, epsilon, delta, sensitivity, gamma, s, unit, neighbours, method, rdp_gamma, seeded, checks, shape_note):
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    classic = sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    analytic = sensitivity * get_sigma_gaussian(epsilon, delta)
    random_dp = rdp_gamma is not None
    stated = ("public: a function of the stated (epsilon, delta, sensitivity, gamma bound) and the shape" +
              ("; the sensitivity was sampled, so it is as public as its P" if random_dp else ""))
    step = ReportParts(
        report_fields=dict(gamma=rdp_gamma, sensitivity=float(sensitivity), sensitivity_method=method, sigma=s,
                           calibration="mvg-theorem-3",
                           sigma_alternatives={"gaussian-classic": classic, "gaussian-analytic": analytic}),
        checks=checks,
        notes=[
            "MVG mechanism (Chanyaswad et al., CCS 2018, Theorem 3); the condition is sufficient and "
            "loose: sigma_alternatives shows the i.i.d. Gaussian noise that would give the same (eps, delta).",
            shape_note,
        ],
        details={"theorem_3": asdict(c), "gamma_bound": float(gamma)},
        published={
            "noisy": ("random-DP: random DP with respect to the P of the sampled sensitivity, not DP" if random_dp
                      else "DP"),
            "topic_word": "post-processing: negative entries of noisy clipped to 0, rows renormalised",
            "vocabulary": "public: column labels given by the caller (default: column indices)",
            **{f"report.{name}": stated for name in ("sensitivity", "sigma", "sigma_alternatives", "composition",
                                                      "composition_total", "details.theorem_3", "details.gamma_bound")},
        },
    )
    return compose_report(
        step, mechanism="mvg", guarantee="random-DP" if random_dp else "approx-DP", unit=unit, neighbours=neighbours,
        epsilon=float(epsilon), delta=float(delta), seeded=seeded,
        composition=[{"name": "mvg", "epsilon": float(epsilon), "delta": float(delta), "sigma": s}],
        composition_total=[total("mvg-theorem-3 (single release)", epsilon, delta)])
