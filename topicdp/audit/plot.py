"""Trade-off plot: empirical (FPR, FNR) of the audit's tests against the (epsilon, delta)-DP region.

(epsilon, delta)-DP confines every test to the region (Kairouz, Oh & Viswanath 2015, Thm. 2.1)

    FNR >= max(0, 1 - delta - e^eps FPR, e^-eps (1 - delta - FPR)).

Points below the claimed boundary (with their confidence margin) refute the claim.
"""

from __future__ import annotations

import numpy as np

from .._extras import require
from .._files import atomic_path


def dp_region_boundary(fpr, epsilon: float, delta: float) -> np.ndarray:
    """Smallest FNR an (epsilon, delta)-DP mechanism allows at each FPR."""
    fpr = np.asarray(fpr, dtype=np.float64)
    return np.maximum.reduce([np.zeros_like(fpr), 1.0 - delta - np.exp(epsilon) * fpr,
                              np.exp(-epsilon) * (1.0 - delta - fpr)])


def _panel(ax, result, log: bool) -> None:
    fpr, fnr = np.asarray(result.bound.curve_fpr), np.asarray(result.bound.curve_fnr)
    useful = fpr + fnr <= 1.0  # of a test and its complement, the one better than a coin
    fpr, fnr = fpr[useful], fnr[useful]
    best = (result.bound.fpr_hi, result.bound.fnr_hi)
    if log:  # the region is symmetric in (FPR, FNR): put the smaller rate on the x axis
        fpr, fnr = np.minimum(fpr, fnr), np.maximum(fpr, fnr)
        best = (min(best), max(best))
        keep = fpr > 0
        fpr, fnr = fpr[keep], fnr[keep]
    x = np.logspace(-7, 0, 600) if log else np.linspace(0, 1, 600)
    ax.scatter(fpr, fnr, s=6, color="tab:blue", alpha=0.5, label="empirical tests")
    if result.epsilon is not None:
        ax.plot(x, dp_region_boundary(x, result.epsilon, result.delta), color="tab:green",
                label=f"claimed ({result.epsilon:.3g}, {result.delta:.2g})-DP boundary")
    ax.plot(x, dp_region_boundary(x, result.eps_lower, result.delta), "--", color="tab:red",
            label=f"eps_lower = {result.eps_lower:.3g}")
    ax.plot([best[0]], [best[1]], "x", color="tab:red", ms=9, label="best test (CP upper bounds)")
    ax.set_ylim(0, 1)
    if log:
        ax.set_xscale("log")
        ax.set_xlim(max(1e-7, 0.3 / max(1, result.n_trials)), 1)
        ax.set_xlabel("smaller error rate (FPR or FNR)")
        ax.set_ylabel("larger error rate")
    else:
        ax.set_xlim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("false-positive rate")
        ax.set_ylabel("false-negative rate")


def plot_tradeoff(result, path, *, title: str | None = None):
    """Save the trade-off plot of an :class:`~topicdp.audit.runner.AuditResult` to ``path`` (PNG, PDF, SVG...).

    Two panels: linear axes; and the smaller error rate on a log axis against the larger one (the DP region
    is symmetric under swapping FPR and FNR), where the small rates that decide epsilon are visible.
    Uses matplotlib's Agg canvas directly (no pyplot, no global backend change). Returns ``path``.
    """
    require("matplotlib", extra="plots", purpose="plot_tradeoff")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 5))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2)
    for ax, log in zip(axes, (False, True)):
        _panel(ax, result, log=log)
    axes[1].legend(loc="lower left", fontsize=8)
    fig.suptitle(title or f"{result.mechanism} | canary: {result.canary} | distinguisher: {result.distinguisher} | "
                 f"{result.n_trials} trials, {result.confidence:.0%} CP")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    return path
