"""The four differentially private configurations (DeCarolis et al. 2020, Sec. 6, Fig. 1, Table 1; Table 3 of the
paper's longer earlier version): cuts of the data-flow graph, noise on the cut's edges making everything
downstream post-processing. All whiten with a *released* M2 (the paper: the noiseless one), which makes every
sensitivity provable (:mod:`.sensitivity`), or with a public reference's (``public_whitening=``: no M2 released).

1. (e3, e4, e8): noise on M3_hat in whitened space (:func:`.noise.whitened_m3_noise`, the exactly equivalent k^3
   Gaussian) and twice on M2_hat, combined by inverse-variance weighting. No precondition.
2. (e6, e8): noise on M2_hat (e8) and on ``T = M3_hat(W, W, W)`` (e6) at ``Delta_T = Delta3 / lambda_k^{3/2}``.
3. (e7, e8): ``[T(I, v_i, v_i)]_i`` of Jennrich's decomposition of the noiseless T, at the local sensitivity
   given Procedure-1 bounds of the eigengap and of ``||T||_F``.
4. (e9, e8): as 3, then noise on the un-whitened, simplex-projected (1-Lipschitz) topics and alpha (the paper's
   has no e8, without which no output bound is proven).

Preconditions, on released quantities only: fewer than k positive eigenvalues of the released M2, or a
non-positive private eigengap bound (3-4), always raise; Table 3's ``Delta2 <= (lambda_k - lambda_{k+1}) / 2``,
(3-4) ``2^{3/2} Delta_T / gamma < 1/2`` and the utility check of Apps. I.1-I.2 (the released M2's noise norm
``~ s sqrt(2d)`` below half its gap) raise when ``strict`` in 2-4, else are recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..report import Check
from .accounting import SpectralBudget
from .moments import M2Operator, MomentDocuments, whitened_m3
from .noise import symmetric_matrix_noise, symmetric_tensor_noise, whitened_m3_noise
from .procedure1 import laplace_bound
from .recovery import alpha_from_eigenvalues, project_to_simplex, recover_topics, to_simplex
from .sensitivity import (delta_m2, delta_m3, eigenvector_perturbation, jennrich_sensitivity,
                          whitened_tensor_sensitivity)
from .tensor import apply_vv, eigengaps, jennrich, power_method
from .whitening import Whitening, whiten


class PreconditionError(ValueError):
    """A configuration's precondition failed on the released quantities. The message names the check and its public
    side only, the released values it compared (DP outputs) are in ``check.detail``: neighbours refused by the same
    check get the same message."""

    def __init__(self, message: str, check: Check | None = None):
        super().__init__(message)
        self.check = check


CONFIGURATIONS: dict[int, dict[str, tuple[str, ...]]] = {
    1: {"edges": ("e3", "e4", "e8"), "gaussian": ("e3", "e4", "e8"), "laplace": ()},
    2: {"edges": ("e6", "e8"), "gaussian": ("e6", "e8"), "laplace": ()},
    3: {"edges": ("e7", "e8"), "gaussian": ("e7", "e8"), "laplace": ("p1_gap", "p1_norm")},
    4: {"edges": ("e9", "e8"), "gaussian": ("e9", "e8"), "laplace": ("p1_gap", "p1_norm")},
}

#: the releases of M2 (whitening); none of them is made when the whitening comes from public data
M2_EDGES = ("e4", "e8")


def releases(cfg: int, public_whitening: bool) -> tuple[tuple[str, ...], ...]:
    """``(edges, gaussian, laplace)`` release names of configuration ``cfg``."""
    drop = M2_EDGES if public_whitening else ()
    spec = CONFIGURATIONS[cfg]
    return tuple(tuple(n for n in spec[kind] if n not in drop) for kind in ("edges", "gaussian", "laplace"))


@dataclass
class Context:
    """Everything a configuration needs; configurations append to ``checks`` and ``details``."""

    corpus: MomentDocuments
    alpha0: float
    k: int
    budget: SpectralBudget
    rng: np.random.Generator
    theta: np.ndarray
    strict: bool = True
    public: Whitening | None = None
    simplex: str = "project"
    n_restarts: int = 5
    noisy_max_iter: int = 30
    checks: list = field(default_factory=list)
    details: dict = field(default_factory=dict)

    def check(self, name: str, passed: bool, detail: str, *, fatal: bool = False, remedy: str = "",
              failure: str = "") -> None:
        """Record a check; raise :class:`PreconditionError` if it fails and is fatal (or ``strict``). ``detail`` (in
        the report) may hold released values; ``failure``, the error message's statement, must not."""
        check = Check(name=name, passed=bool(passed), detail=detail)
        self.checks.append(check)
        if not passed and (fatal or self.strict):
            said = f": {failure}" if failure else ""
            raise PreconditionError(f"precondition failed: {name}{said} (on released quantities; their values are "
                                    f"DP outputs, in the error's check). {remedy}".strip(), check)


REMEDY = "Fixes: more documents (N), a larger epsilon, or fewer topics (k)"


def _noisy_whitening(ctx: Context, sigma: float, what: str) -> Whitening:
    """Top-k eigenpairs of ``M2_hat + Sym(F)`` (F i.i.d. N(0, sigma^2), dense d x d)."""
    d = ctx.corpus.n_words
    op = M2Operator(ctx.corpus, ctx.alpha0)
    E = symmetric_matrix_noise(d, sigma, ctx.rng)

    def matmat(Q):
        return op.matmat(Q) + E @ Q  # noqa: F821 (E is deleted only after the last call)

    noise_norm = sigma * math.sqrt(2.0 * d)  # spectral edge of Sym(F): 2 sqrt(d sigma^2 / 2)
    try:
        # shift past the noise bulk so the block iteration finds the algebraically largest eigenpairs
        wh = whiten(matmat, d, ctx.k, rng=ctx.rng, what=f"the noisy (released) M2 [{what}]", tol=1e-6,
                    max_iter=ctx.noisy_max_iter, warn=False, shift=1.1 * noise_norm)
    except ValueError as exc:
        ctx.check("released M2 has k positive eigenvalues", False, str(exc), fatal=True, remedy=REMEDY,
                  failure="fewer than k of the released M2's top k eigenvalues are positive")
        raise  # pragma: no cover
    del E  # frees the d x d noise; the closure above is not called after this
    ctx.details.update({"released_m2_eigenvalues": wh.eigenvalues.tolist(),
                        "released_m2_next_eigenvalue": wh.next_eigenvalue,
                        "m2_noise_sigma": sigma, "m2_noise_spectral_norm_approx": noise_norm})
    ctx.check("released M2 has k positive eigenvalues", True, f"lambda_k = {wh.sigma_k:.3g}")
    return wh


def _whitening(ctx: Context, d2: float, edges: tuple[str, ...]) -> Whitening:
    """The public whitening if there is one, else M2 released on ``edges`` (inverse-variance combined) and its gap
    checks: for one release (configurations 2-4) Table 3's and App. I.2's, else App. I.1's, recorded only."""
    if ctx.public is not None:
        ctx.details.update({"whitening": "public reference corpus",
                            "public_m2_eigenvalues": ctx.public.eigenvalues.tolist()})
        return ctx.public
    what = {"e4": "M2_hat for W (Sym Gaussian, d x d)", "e8": "M2_hat for W^dagger (Sym Gaussian, d x d)"}
    if len(edges) == 1:
        what["e8"] = "M2_hat (Sym Gaussian, d x d): W and W^dagger"
    sigmas = [ctx.budget.gaussian_sigma(e, d2, what=what[e]) for e in edges]
    # inverse-variance combination of public M2 releases has exactly this law
    s_comb = 1.0 / math.sqrt(sum(1.0 / s ** 2 for s in sigmas))
    wh = _noisy_whitening(ctx, s_comb, "+".join(edges))
    gap, noise = wh.gap, ctx.details["m2_noise_spectral_norm_approx"]
    detail = f"||E_M2|| ~ {noise:.3g} vs released gap/2 = {gap / 2:.3g}"
    if len(edges) == 1:
        ctx.check("Table 3: Delta2 <= (lambda_k - lambda_k+1)/2 (released M2)", d2 <= gap / 2,
                  f"Delta2 = {d2:.3g}, released gap/2 = {gap / 2:.3g}", remedy=REMEDY,
                  failure=f"Delta2 = {d2:.3g} is more than half the released gap")
        ctx.check("utility: M2 noise below half the spectral gap (App. I.2)", noise <= gap / 2, detail, remedy=REMEDY,
                  failure=f"||E_M2|| ~ {noise:.3g} is more than half the released gap")
    else:
        ctx.checks.append(Check("utility: M2 noise below half the spectral gap (App. I.1)", bool(noise <= gap / 2),
                                detail))
    ctx.details.update({"whitening": "released M2", "m2_combined_sigma": s_comb})
    return wh


def _whitened_tensor(ctx: Context, m2_edges: tuple[str, ...]) -> tuple[Whitening, np.ndarray, float]:
    """``(whitening, noiseless T = M3_hat(W, W, W), Delta3)`` with M2 released on ``m2_edges`` (or public); records
    Delta2, Delta3 and, for configurations 2-4 (one M2 release), ``Delta_T``."""
    n, a0 = ctx.corpus.n_units, ctx.alpha0
    d2, d3 = delta_m2(n, a0, norm="fro"), delta_m3(n, a0, norm="fro")
    wh = _whitening(ctx, d2, m2_edges)
    ctx.details.update({"Delta2": d2, "Delta3": d3})
    if len(m2_edges) == 1:
        ctx.details["Delta_T"] = whitened_tensor_sensitivity(d3, wh.sigma_k)
    return wh, whitened_m3(ctx.corpus, a0, wh.W), d3


def run_config1(ctx: Context):
    wh, T, d3 = _whitened_tensor(ctx, ("e4", "e8"))
    s3 = ctx.budget.gaussian_sigma("e3", d3, what="M3_hat (Sym Gaussian, d^3, applied in whitened space)")
    dec = power_method(T + whitened_m3_noise(wh.W, s3, ctx.rng), rng=ctx.rng, n_restarts=ctx.n_restarts)
    return recover_topics(dec.values, dec.vectors, wh.B, ctx.alpha0, ctx.simplex)


def run_config2(ctx: Context):
    wh, T, _ = _whitened_tensor(ctx, ("e8",))
    s6 = ctx.budget.gaussian_sigma("e6", ctx.details["Delta_T"], what="T = M3_hat(W, W, W) (Sym Gaussian, k^3)")
    dec = power_method(T + symmetric_tensor_noise(ctx.k, s6, ctx.rng), rng=ctx.rng, n_restarts=ctx.n_restarts)
    return recover_topics(dec.values, dec.vectors, wh.B, ctx.alpha0, ctx.simplex)


def _private_decomposition(ctx: Context):
    """Shared by configurations 3-4: e8 (or public) whitening, Jennrich decomposition, Procedure-1 bounds."""
    wh, T, _ = _whitened_tensor(ctx, ("e8",))
    dT = ctx.details["Delta_T"]
    dec, rho = jennrich(T, ctx.theta)
    gap = float(np.min(eigengaps(rho)))
    gap_b = laplace_bound("p1_gap", gap, 2.0 * dT, *ctx.budget.laplace_epsilon("p1_gap"), ctx.rng, side="lower")
    ctx.budget.record_laplace(gap_b, "lower bound of the eigengap of T(I, I, theta)")
    norm_b = laplace_bound("p1_norm", float(np.linalg.norm(T)), dT, *ctx.budget.laplace_epsilon("p1_norm"), ctx.rng,
                           side="upper")
    ctx.budget.record_laplace(norm_b, "upper bound of ||T||_F")
    ctx.details["procedure1"] = [gap_b.as_dict(), norm_b.as_dict()]
    ctx.check("Procedure 1: private eigengap lower bound > 0", gap_b.bound > 0,
              f"gamma_tilde = {gap_b.bound:.3g}", fatal=True, remedy=REMEDY,
              failure="the private lower bound gamma_tilde is not positive")
    move = eigenvector_perturbation(dT, gap_b.bound)
    ctx.check("Table 3 (configs 3-4): 2^{3/2} Delta_T / gamma_tilde < 1/2", move < 0.5,
              f"eigenvector perturbation bound = {move:.3g}", remedy=REMEDY,
              failure="the eigenvector perturbation bound is not below 1/2")
    L = jennrich_sensitivity(dT, gap_b.bound, max(norm_b.bound, 0.0), ctx.k)
    ctx.details["Delta_decomposition"] = L
    return wh, apply_vv(T, dec.vectors), L


def run_config3(ctx: Context):
    wh, w, L = _private_decomposition(ctx)
    s7 = ctx.budget.gaussian_sigma("e7", L, what="[T(I, v_i, v_i)]_i = (lambda_i v_i), k x k (Gaussian)")
    w_noisy = w + ctx.rng.normal(0.0, s7, size=w.shape)
    lam = np.linalg.norm(w_noisy, axis=0)
    return recover_topics(lam, w_noisy / np.where(lam > 0, lam, 1.0), wh.B, ctx.alpha0, ctx.simplex)


def run_config4(ctx: Context):
    wh, w, L = _private_decomposition(ctx)
    a0 = ctx.alpha0
    c = (a0 + 2.0) / 2.0
    lam = np.linalg.norm(w, axis=0)
    mu = project_to_simplex((c * (wh.B @ w)).T)  # k x d, 1-Lipschitz
    L9 = L * math.sqrt(c * c * float(wh.eigenvalues[0]) + 1.0)
    s9 = ctx.budget.gaussian_sigma("e9", L9, what="final topics (k x d, projected) and eigenvalues (k)")
    mu_noisy = mu + ctx.rng.normal(0.0, s9, size=mu.shape)
    lam_noisy = lam + ctx.rng.normal(0.0, s9, size=lam.shape)
    ctx.details["Delta_output"] = L9
    topics, n_bad = to_simplex(mu_noisy, ctx.simplex)
    alpha = alpha_from_eigenvalues(lam_noisy, a0)
    order = np.argsort(-alpha, kind="stable")
    return topics[order], alpha[order], n_bad


RUNNERS = {1: run_config1, 2: run_config2, 3: run_config3, 4: run_config4}
