"""PrivacyReport of a DP-SVI fit: both accountings of the noise that was actually used, side by side."""

from __future__ import annotations

from ..report import Check, PrivacyReport
from .accounting import accountant_epsilon, calibrate_noise_multiplier, paper_epsilon

PAPER_CAVEAT = (
    "The 'paper' total follows Park et al. 2016 Eqs. 3, 5, 6 as written; it is not a valid bound: it "
    "treats the subsampled (eps', delta')-DP step as rho-zCDP, drops the per-step delta', and uses the "
    "classical Gaussian calibration outside its proven range eps_iter < 1. The stated guarantee is the "
    "dp-accounting total."
)


def _alternatives(est, scheme) -> dict:
    """sigma that each calibration would have chosen for the same target (epsilon, delta)."""
    out = {}
    methods = ("rdp", "pld", "paper") if scheme.kind == "poisson" else ("rdp", "paper")
    for method in methods:
        if method == "pld" and est.accountant != "pld":
            continue  # PLD calibration costs seconds; computed only when it is the chosen accountant
        z = est.noise_multiplier_ if method == est.accountant else calibrate_noise_multiplier(
            scheme, est.epsilon, est.delta, method, delta_iter=est.paper_delta_iter)
        out[method] = z * est.sensitivity_
    return out


def _totals(est, scheme) -> dict:
    z = est.noise_multiplier_
    totals = {"rdp": {"epsilon": accountant_epsilon(scheme, z, est.delta, "rdp"), "delta": est.delta}}
    if est.accountant == "pld":
        totals["pld"] = {"epsilon": accountant_epsilon(scheme, z, est.delta, "pld"), "delta": est.delta}
    paper = paper_epsilon(z, scheme.sampling_rate, scheme.n_iterations, est.delta, est.paper_delta_iter)
    totals["paper"] = {**paper, "valid_bound": False}
    return totals


def dpsvi_report(est, scheme, n_docs: int) -> PrivacyReport:
    totals = _totals(est, scheme)
    certified_by = "pld" if est.accountant == "pld" else "rdp"
    certified = totals[certified_by]["epsilon"]
    paper = totals["paper"]
    checks = [
        Check(f"certified epsilon <= target ({certified_by})", certified <= est.epsilon * (1 + 1e-9),
              f"{certified:.6g} vs target {est.epsilon:.6g}"),
        Check("delta < 1/n_docs", est.delta < 1.0 / n_docs, f"delta={est.delta:.3g}, 1/n_docs={1.0 / n_docs:.3g}"),
        Check("paper recipe: eps_iter < 1 (Eq. 3 proven range)", paper["epsilon_iter"] < 1.0,
              f"eps_iter={paper['epsilon_iter']:.4g}"),
    ]
    return PrivacyReport(
        mechanism="dp-svi",
        guarantee="approx-DP",
        unit="document",
        neighbours=scheme.neighbours,
        epsilon=float(certified),
        delta=float(est.delta),
        sensitivity=float(est.sensitivity_),
        sensitivity_method=(
            f"global bound on the minibatch sum of expected sufficient statistics with document-length cap "
            f"N={est.doc_length_cap}: {'N' if scheme.neighbours == 'add-remove' else 'sqrt(2) N'} "
            "(Park et al. Eq. 4, corrected for replace-one)"
        ),
        sigma=float(est.sigma_),
        calibration=est.accountant,
        sigma_alternatives=_alternatives(est, scheme),
        composition=[{
            "name": "sampled-gaussian", "count": scheme.n_iterations, "sampling": scheme.kind,
            "sampling_rate": scheme.sampling_rate, "batch_size": scheme.batch_size,
            "noise_multiplier": est.noise_multiplier_, "sigma": est.sigma_, "sensitivity": est.sensitivity_,
        }],
        composition_total=totals,
        checks=checks,
        seeded=est.random_state is not None,
        notes=_notes(est, scheme),
        details={
            "n_docs": n_docs, "doc_length_cap": est.doc_length_cap, "length_policy": est.length_policy,
            "n_docs_capped": est.n_docs_capped_, "target_epsilon": est.epsilon,
            "noise_multiplier": est.noise_multiplier_,
        },
    )


def _notes(est, scheme) -> list[str]:
    relation = ("Poisson sampling with add/remove-one-document neighbours" if scheme.kind == "poisson"
                else "fixed-size batches without replacement with replace-one-document neighbours")
    return [
        f"Every one of the {scheme.n_iterations} iterations releases noisy sufficient statistics; the "
        f"accountant composes all of them for {relation}.",
        f"Documents longer than N={est.doc_length_cap} tokens were cut to N ({est.length_policy}); "
        f"{est.n_docs_capped_} documents were affected. That count is computed from the private data and "
        "is not privatised: remove it before publishing this report.",
        PAPER_CAVEAT,
    ]


def nonprivate_report(est, scheme) -> PrivacyReport:
    return PrivacyReport(
        mechanism="svi-lda (non-private)",
        guarantee="none",
        unit="document",
        neighbours=scheme.neighbours,
        epsilon=float("inf"),
        delta=0.0,
        calibration="none",
        seeded=est.random_state is not None,
        notes=["Non-private online LDA: no noise was added; nothing is guaranteed."],
        details={"n_docs_capped": est.n_docs_capped_, "doc_length_cap": est.doc_length_cap},
    )
