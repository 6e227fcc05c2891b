"""PrivacyReport of a DP-SVI fit: both accountings of the noise that was actually used, side by side."""

from __future__ import annotations

from ..private_release import VocabularyStatement
from ..report import Check, PrivacyReport, ReportParts, compose_report, total
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


def _totals(est, scheme) -> list[dict]:
    z = est.noise_multiplier_
    totals = [total("rdp", accountant_epsilon(scheme, z, est.delta, "rdp"), est.delta)]
    if est.accountant == "pld":
        totals.append(total("pld", accountant_epsilon(scheme, z, est.delta, "pld"), est.delta))
    paper = paper_epsilon(z, scheme.sampling_rate, scheme.n_iterations, est.delta, est.paper_delta_iter)
    details = {k: v for k, v in paper.items() if k not in ("epsilon", "delta")}
    totals.append(total("paper", paper["epsilon"], paper.get("delta", est.delta), valid=False, **details))
    return totals


def _published(est, scheme, vocab_status: str) -> dict:
    """Status of every published field: the noise follows from stated parameters, except q when it was
    derived from the private corpus size under add/remove neighbours."""
    rate_derived = scheme.kind == "poisson" and est.sampling_rate is None
    stated = ("NOT COVERED: the sampling rate q = batch_size / n_docs depends on the private corpus size under "
              "add/remove neighbours; pass sampling_rate to make it public" if rate_derived else
              "public: a function of the stated (epsilon, delta, q, T, doc_length_cap) only" +
              ("" if scheme.kind == "poisson" else " and the stated N (replace-one neighbours)"))
    return {
        "topic_word": "post-processing: E[beta] from lambda, built from the noisy sufficient statistics only",
        "vocabulary": vocab_status,
        **{f"report.{name}": stated for name in ("sensitivity", "sigma", "sigma_alternatives", "composition",
                                                  "composition_total")},
        **{f"report.details.{name}": stated for name in ("doc_length_cap", "length_policy", "target_epsilon",
                                                          "noise_multiplier")},
        **({"report.details.n_docs": "public (stated): N is the same for all replace-one neighbours"}
           if scheme.kind == "fixed" else {}),
    }


def dpsvi_report(est, scheme, n_docs: int, vocabulary: VocabularyStatement) -> tuple[PrivacyReport, dict]:
    """The report, and the owner's diagnostics (what capping cut; N and the delta check under add/remove)."""
    totals = _totals(est, scheme)
    certified_by = "pld" if est.accountant == "pld" else "rdp"
    certified = next(t["epsilon"] for t in totals if t["accounting"] == certified_by)
    paper = next(t for t in totals if t["accounting"] == "paper")
    inverse = 1.0 / n_docs if n_docs else float("inf")  # no document (add/remove: a private diagnostic)
    n_check = Check("delta < 1/n_docs", est.delta < inverse, f"delta={est.delta:.3g}, 1/n_docs={inverse:.3g}")
    checks = [
        Check(f"certified epsilon <= target ({certified_by})", certified <= est.epsilon * (1 + 1e-9),
              f"{certified:.6g} vs target {est.epsilon:.6g}"),
    ]
    # the paper's recipe is shown for comparison only (its total is marked not valid), so its range is a note,
    # not a check of this release
    eps_iter = paper["details"]["epsilon_iter"]
    recipe_note = (f"For comparison, the paper's recipe gives eps_iter = {eps_iter:.4g} per iteration; its Eq. 3 is "
                   "proven for eps_iter < 1 " + ("only, so its total is not a bound here." if eps_iter >= 1 else "(met)."))
    diagnostics = {"n_docs_capped": est.n_docs_capped_,
                   "note": "documents longer than doc_length_cap, counted on the private data (not privatised)"}
    details = {"doc_length_cap": est.doc_length_cap, "length_policy": est.length_policy,
               "target_epsilon": est.epsilon, "noise_multiplier": est.noise_multiplier_}
    if scheme.kind == "fixed":  # replace-one: N is public
        checks.insert(1, n_check)
        details["n_docs"] = n_docs
    else:  # add/remove: N is private, and so is whether delta < 1/N
        diagnostics.update({"n_docs": n_docs, "delta_check": {"passed": n_check.passed, "detail": n_check.detail}})
    step = ReportParts(_published(est, scheme, vocabulary.status),
                       [*([vocabulary.note] if vocabulary.note else []), *_notes(est, scheme), recipe_note], checks,
                       details,
                       report_fields=dict(
        sensitivity=float(est.sensitivity_),
        sensitivity_method=(
            f"global bound on the minibatch sum of expected sufficient statistics with document-length cap "
            f"N={est.doc_length_cap}: {'N' if scheme.neighbours == 'add-remove' else 'sqrt(2) N'} "
            "(Park et al. Eq. 4, corrected for replace-one)"
        ),
        sigma=float(est.sigma_),
        calibration=est.accountant,
        sigma_alternatives=_alternatives(est, scheme)))
    report = compose_report(
        step,
        mechanism="dpsvi",
        guarantee="approx-DP",
        unit="document",
        neighbours=scheme.neighbours,
        epsilon=float(certified),
        delta=float(est.delta),
        seeded=est.random_state is not None,
        composition=[{
            "name": "sampled-gaussian", "count": scheme.n_iterations, "sampling": scheme.kind,
            "sampling_rate": scheme.sampling_rate, "batch_size": scheme.batch_size,
            "noise_multiplier": est.noise_multiplier_, "sigma": est.sigma_, "sensitivity": est.sensitivity_,
        }],
        composition_total=totals,
    )
    return report, diagnostics


def _notes(est, scheme) -> list[str]:
    relation = ("Poisson sampling with add/remove-one-document neighbours" if scheme.kind == "poisson"
                else "fixed-size batches without replacement with replace-one-document neighbours")
    return [
        f"Every one of the {scheme.n_iterations} iterations releases noisy sufficient statistics; the "
        f"accountant composes all of them for {relation}.",
        f"Documents longer than N={est.doc_length_cap} tokens were cut to N ({est.length_policy}); how many were "
        "cut is counted on the private data and kept in the release's diagnostics, not in the report.",
        PAPER_CAVEAT,
    ]
