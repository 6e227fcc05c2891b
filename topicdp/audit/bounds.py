"""From distinguisher scores to an epsilon lower bound with Clopper-Pearson intervals.

(epsilon, delta)-DP holds iff every rejection region of D (canary out) against D' (in) has ``FPR + e^eps FNR >=
1 - delta`` and ``e^eps FPR + FNR >= 1 - delta`` (Kairouz, Oh & Viswanath 2015, Thm. 2.1), so every test
certifies ``eps >= max(log((1 - delta - FNR) / FPR), log((1 - delta - FPR) / FNR))``. With the rates replaced by
one-sided Clopper & Pearson (1934) upper bounds this stays a valid lower bound at the stated confidence
(Jagielski, Ullman & Oprea 2020; Nasr, Song, Thakurta, Papernot & Carlini 2021).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import betaincinv

from .._validation import check_option, check_random_state, check_real

SELECTIONS = ("held-out", "same-sample")
_SELECTION_STRICTNESS = 100.0  # held-out: candidates are ranked with alpha / 100


def clopper_pearson_upper(k, n: int, alpha: float) -> np.ndarray:
    """One-sided (1 - alpha) Clopper-Pearson upper bound on a proportion from ``k`` of ``n``: the (1 - alpha)
    quantile of Beta(k + 1, n - k), and 1 when k = n."""
    k = np.asarray(k, dtype=np.float64)
    out = np.ones_like(k)
    below = k < n
    out[below] = betaincinv(k[below] + 1.0, n - k[below], 1.0 - alpha)
    return out


def _counts_at_thresholds(out_sorted: np.ndarray, in_sorted: np.ndarray):
    """Thresholds (distinct scores and +inf) and, for "in iff score >= t", the counts #{out >= t} and #{in < t}
    (the complement test has ``n - k``)."""
    thresholds = np.append(np.unique(np.concatenate([out_sorted, in_sorted])), np.inf)
    k_fp = out_sorted.size - np.searchsorted(out_sorted, thresholds, side="left")
    k_fn = np.searchsorted(in_sorted, thresholds, side="left")
    return thresholds, k_fp, k_fn


def _eps_from_rates(fpr_hi: np.ndarray, fnr_hi: np.ndarray, delta: float) -> np.ndarray:
    """log((1 - delta - FNR)/FPR) per test (swap the arguments for the other inequality)."""
    num = 1.0 - delta - fnr_hi
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-300)) - np.log(fpr_hi), -np.inf)


@dataclass
class EpsilonBound:
    """The epsilon lower bound and the test that attains it.

    ``threshold`` and ``direction`` (``">="`` or ``"<"``: "canary in" iff ``score >= threshold``, resp. ``<``),
    ``inequality`` (``"fnr"``: log((1-delta-FNR)/FPR), ``"fpr"``: the swap), the empirical rates and their
    Clopper-Pearson bounds, the trade-off curve of every threshold test, and the samples used (halves for
    ``"held-out"``).
    """

    eps_lower: float
    threshold: float
    direction: str
    inequality: str
    fpr: float
    fnr: float
    fpr_hi: float
    fnr_hi: float
    curve_fpr: np.ndarray
    curve_fnr: np.ndarray
    n_out: int
    n_in: int
    confidence: float
    delta: float
    selection: str


def _check_scores(scores, name: str) -> np.ndarray:
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of scores, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def _best(out_sorted, in_sorted, delta, alpha, block: int = 2048):
    """The threshold test (both directions and inequalities) with the largest certified epsilon; tests are visited in
    decreasing order of their empirical value (an upper bound of the certified one), in blocks, until none can win."""
    n_out, n_in = out_sorted.size, in_sorted.size
    thresholds, k_fp, k_fn = _counts_at_thresholds(out_sorted, in_sorted)
    fp = np.concatenate([k_fp, n_out - k_fp])  # ">=" tests, then their complements "<"
    fn = np.concatenate([k_fn, n_in - k_fn])
    fpr, fnr = fp / n_out, fn / n_in
    with np.errstate(divide="ignore"):
        emp = np.concatenate([_eps_from_rates(fpr, fnr, delta), _eps_from_rates(fnr, fpr, delta)])
    order = np.argsort(-emp, kind="stable")
    best_eps, best = -np.inf, (0, 0.0, 0.0)
    for start in range(0, order.size, block):
        cand = order[start : start + block]
        if emp[cand[0]] <= best_eps:
            break
        test = cand % fp.size
        fpr_hi = clopper_pearson_upper(fp[test], n_out, alpha)
        fnr_hi = clopper_pearson_upper(fn[test], n_in, alpha)
        first = cand < fp.size  # inequality "fnr" for the first copy, "fpr" for the second
        eps = np.where(first, _eps_from_rates(fpr_hi, fnr_hi, delta), _eps_from_rates(fnr_hi, fpr_hi, delta))
        i = int(np.argmax(eps))
        if eps[i] > best_eps:
            best_eps, best = float(eps[i]), (int(cand[i]), float(fpr_hi[i]), float(fnr_hi[i]))
    flat, fpr_best, fnr_best = best
    idx, m = flat % fp.size, thresholds.size
    chosen = dict(threshold=float(thresholds[idx % m]), direction=">=" if idx < m else "<",
                  inequality="fnr" if flat < fp.size else "fpr")
    return chosen, best_eps, int(fp[idx]), int(fn[idx]), fpr_best, fnr_best


def _counts_for(test: dict, out_scores: np.ndarray, in_scores: np.ndarray):
    reject_out = out_scores >= test["threshold"]
    reject_in = in_scores >= test["threshold"]
    if test["direction"] == "<":
        reject_out, reject_in = ~reject_out, ~reject_in
    return int(reject_out.sum()), int((~reject_in).sum())


def _thin(x: np.ndarray, y: np.ndarray, max_points: int = 2000):
    if x.size <= max_points:
        return x, y
    keep = np.unique(np.linspace(0, x.size - 1, max_points).round().astype(int))
    return x[keep], y[keep]


def epsilon_bound(scores_out, scores_in, delta: float, confidence: float = 0.95, *, selection: str = "held-out",
                  random_state=None) -> EpsilonBound:
    """The epsilon lower bound with its best test, error rates and trade-off curve (:func:`epsilon_lower_bound`)."""
    out = _check_scores(scores_out, "scores_out")
    inn = _check_scores(scores_in, "scores_in")
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_open=False)
    confidence = check_real(confidence, "confidence", low=0.0, high=1.0)
    selection = check_option(selection, "selection", SELECTIONS)
    alpha = (1.0 - confidence) / 2.0  # Bonferroni over the two rates
    if selection == "held-out":
        if out.size < 2 or inn.size < 2:
            raise ValueError("selection='held-out' needs at least 2 scores on each side")
        rng = check_random_state(random_state)
        out, inn = rng.permutation(out), rng.permutation(inn)
        (out_sel, out), (in_sel, inn) = np.array_split(out, 2), np.array_split(inn, 2)
        # the selection rule affects power, never validity; stricter bounds penalise tests resting on few counts
        test, *_ = _best(np.sort(out_sel), np.sort(in_sel), delta, alpha / _SELECTION_STRICTNESS)
        k_fp, k_fn = _counts_for(test, out, inn)
        fpr_hi = float(clopper_pearson_upper([k_fp], out.size, alpha)[0])
        fnr_hi = float(clopper_pearson_upper([k_fn], inn.size, alpha)[0])
        a, b = (fpr_hi, fnr_hi) if test["inequality"] == "fnr" else (fnr_hi, fpr_hi)
        eps = float(_eps_from_rates(np.array([a]), np.array([b]), delta)[0])
    else:
        test, eps, k_fp, k_fn, fpr_hi, fnr_hi = _best(np.sort(out), np.sort(inn), delta, alpha)
    curve_out, curve_in = np.sort(out), np.sort(inn)
    _, fp_c, fn_c = _counts_at_thresholds(curve_out, curve_in)
    cx = np.concatenate([fp_c, out.size - fp_c[::-1]]) / out.size
    cy = np.concatenate([fn_c, inn.size - fn_c[::-1]]) / inn.size
    cx, cy = _thin(cx, cy)
    return EpsilonBound(eps_lower=max(0.0, eps), fpr=k_fp / out.size, fnr=k_fn / inn.size, fpr_hi=float(fpr_hi),
                        fnr_hi=float(fnr_hi), curve_fpr=cx, curve_fnr=cy, n_out=int(out.size), n_in=int(inn.size),
                        confidence=confidence, delta=delta, selection=selection, **test)


def epsilon_lower_bound(scores_out, scores_in, delta: float, confidence: float = 0.95, *,
                        selection: str = "held-out", random_state=None) -> float:
    """Empirical lower bound on the epsilon of an (epsilon, delta)-DP claim, from distinguisher scores on independent
    releases from D (``scores_out``) and D' (``scores_in``).

    Every threshold test in both directions is scored with one-sided Clopper-Pearson bounds at level
    ``1 - (1 - confidence)/2`` each, certifying ``max(log((1 - delta - FNR_hi) / FPR_hi), log((1 - delta - FPR_hi) /
    FNR_hi))`` (Kairouz, Oh & Viswanath 2015, Thm. 2.1); the best is kept.

    ``selection="held-out"``: with probability at least ``confidence`` the true epsilon at ``delta`` of this pair is
    at least the bound. Proof: the random split is independent of the i.i.d. scores, so the test T chosen on the
    selection halves is fixed given them, and the evaluation halves give ``k_fp ~ Bin(n_out/2, FPR_T)`` and
    ``k_fn ~ Bin(n_in/2, FNR_T)``; each Clopper-Pearson bound fails with probability at most ``(1 - confidence)/2``,
    so both hold with probability ``confidence`` (union bound), and then T's certified values are at most what the
    true rates certify (decreasing in both), at most the true epsilon; this holds given every selection half,
    hence unconditionally. ``"same-sample"`` picks and bounds the test on the same samples (Jagielski et al.; Nasr et
    al.): the maximum over correlated, data-chosen tests is biased upwards and carries no confidence statement.
    """
    return epsilon_bound(scores_out, scores_in, delta, confidence, selection=selection,
                         random_state=random_state).eps_lower
