"""Private evaluation of a release: each topic's NPMI and NPMI contrast on the owner's corpus, under DP.

Document NPMI (Bouma 2009; Lau, Newman & Baldwin 2014) of a pair is ``(h_a + h_b) / h_ab - 1``, ``h_x = log(N /
df_x)`` (:func:`topicdp.metrics.readability.npmi_from_counts`), over a design that is a public function of the lists
and a public seed: the U top words, every within-topic pair and ``n_across`` sampled across pairs per topic (P pairs).
Each unit u contributes ``x_u = sum over its documents of (1, [a in d], [a in d and b in d])`` (``D = 1 + U + P``),
clipped to L2 norm C (Abadi et al. 2016, Sec. 3.1); the release is ``S = sum_u w_u x_u + N(0, sigma^2 I_D)``, sigma
the analytic Gaussian mechanism's (Balle & Wang 2018, Thm. 8), one ledger entry. The default C, ``sqrt(D)``, clips
no document: the estimand is then the exact NPMI.

L2 sensitivity (brute-forced in the tests): a document's 0/1 vector has norm at most ``sqrt(D)``, so add/remove
gives ``min(C, sqrt(D))``; replace-one ``min(sqrt(2) C, sqrt(D))``, since ``||w x - w' x'||^2 <= 2 C^2`` for
non-negative vectors of norm at most C (their inner product is >= 0).

Pair counts are estimated by g-modelling empirical Bayes (Efron 2016, "Empirical Bayes deconvolution estimates",
Biometrika 103(1)): ``df_ab = m_ab e^t``, ``m_ab = df_a df_b / N``, the prior of t per group of pairs the NPMLE on a
grid (EM, Laird 1978). The intervals (:func:`bound_intervals`) do not lean on the prior: pairs above
``PLUGIN_SIGMAS`` sigma by the plug-in with a delta-method term, the others by their NPMI range over a Bonferroni
box (NPMI is monotone in each count), alpha split between the two, the sampled across mean with its sampling
variance (Cochran 1977, "Sampling Techniques", Eq. 2.16). :func:`interval_refusal` refuses them at the user level
(clipping's shift has no public bound) and where the noise leaves the mean undetermined; :func:`predict_error`
simulates the estimator on a public corpus' rates before anything is spent. All post-processing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp
from scipy import stats

from .._names import NEIGHBOURS, UNITS, neighbour_factor
from .._validation import check_delta, check_epsilon, check_int, check_option, check_random_state, check_real
from .readability import _contrast_from, _pair_sums, npmi_from_counts

MECHANISM = "private-evaluation"
SIGMA_MEANING = ("std of the Gaussian noise on each of the D = 1 + U + P clipped per-unit sums (number of "
                 "documents, document frequencies of the U top words and of the P word pairs)")


@dataclass(frozen=True)
class CoherenceDesign:
    """What the private evaluation counts: the U sorted top ``words``, each list as indices into them (``top``, K x
    n), the distinct ``pairs`` (P x 2, within pairs first), each topic's rows of them (``within``, and ``across``
    with repeats), and how many across pairs each topic's sample was drawn from (``n_across_total``).
    """

    words: tuple
    top: np.ndarray
    pairs: np.ndarray
    within: tuple
    across: tuple
    n_across_total: np.ndarray

    @property
    def n_topics(self) -> int:
        return int(self.top.shape[0])

    @property
    def dimension(self) -> int:
        """D = 1 + U + P, the length of each unit's contribution."""
        return 1 + len(self.words) + int(self.pairs.shape[0])


def coherence_design(top_words: Sequence[Sequence[str]], *, n_across: int | None = None,
                     seed: int = 0) -> CoherenceDesign:
    """The design of K >= 1 lists of n >= 2 distinct words: within pairs, and ``n_across`` across pairs per topic
    (default n (n - 1) / 2; 0 for none) drawn with the public ``seed``."""
    lists = [[str(w) for w in t] for t in top_words]
    if not lists or any(len(t) < 2 for t in lists) or len({len(t) for t in lists}) != 1:
        raise ValueError("top_words must be K >= 1 lists of the same length n >= 2")
    if any(len(set(t)) != len(t) for t in lists):
        raise ValueError("top_words must not repeat a word within a list")
    K, n = len(lists), len(lists[0])
    n_across = n * (n - 1) // 2 if n_across is None else check_int(n_across, "n_across", low=0)
    words = tuple(sorted({w for t in lists for w in t}))
    index = {w: i for i, w in enumerate(words)}
    top = np.array([[index[w] for w in t] for t in lists], dtype=np.int64)
    pair_index: dict = {}

    def pid(a: int, b: int) -> int:
        key = (min(a, b), max(a, b))
        return pair_index.setdefault(key, len(pair_index))

    iu = np.triu_indices(n, 1)
    within = tuple(np.array([pid(row[i], row[j]) for i, j in zip(*iu)], dtype=np.int64) for row in top)
    rng = np.random.default_rng(np.random.SeedSequence([check_int(seed, "seed", low=0), 0x70E7A1]))
    across: list[np.ndarray] = []
    totals: list[int] = []
    for k in range(K):
        cand = [(a, b) for a in top[k] for j in range(K) if j != k for b in top[j] if a != b]
        totals.append(len(cand))
        if n_across == 0 or not cand:
            across.append(np.zeros(0, dtype=np.int64))
            continue
        across.append(np.array([pid(*cand[i]) for i in rng.integers(0, len(cand), size=n_across)], dtype=np.int64))
    pairs = np.array(sorted(pair_index, key=lambda p: pair_index[p]), dtype=np.int64).reshape(-1, 2)
    return CoherenceDesign(words=words, top=top, pairs=pairs, within=within, across=tuple(across),
                           n_across_total=np.array(totals, dtype=np.int64))


def document_indicators(corpus, design: CoherenceDesign) -> sp.csr_matrix:
    """(n_docs, D) 0/1 matrix: 1, the word indicators and the pair indicators of every document (private)."""
    index = {w: j for j, w in enumerate(corpus.vocabulary)}
    cols = np.array([index.get(w, -1) for w in design.words], dtype=np.int64)
    X = sp.csr_matrix(corpus.X)
    n_docs, U = X.shape[0], len(design.words)
    present = np.flatnonzero(cols >= 0)
    M = sp.csr_matrix((np.ones(present.size), (cols[present], present)), shape=(X.shape[1], U))
    Xb = X.copy()
    Xb.data = np.ones_like(Xb.data, dtype=np.float64)
    B = sp.csc_matrix(Xb @ M)
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    Q = sp.csc_matrix(B[:, a].multiply(B[:, b])) if design.pairs.size else sp.csc_matrix((n_docs, 0))
    return sp.hstack([sp.csc_matrix(np.ones((n_docs, 1))), B, Q], format="csr")


def unit_contributions(corpus, design: CoherenceDesign, unit: str) -> sp.csr_matrix:
    """(n_units, D) matrix whose row u is x_u: a document's indicators, or their sum over a user's (private)."""
    unit = check_option(unit, "unit", UNITS)
    V = document_indicators(corpus, design)
    if unit == "document":
        return V
    G = sp.csr_matrix((np.ones(corpus.n_docs), (corpus.doc_users, np.arange(corpus.n_docs))),
                      shape=(corpus.n_users, corpus.n_docs))
    return sp.csr_matrix(G @ V)


def clipped_sum(contributions: sp.csr_matrix, clip: float) -> tuple[np.ndarray, np.ndarray]:
    """``(sum_u w_u x_u, w)``, ``w_u = min(1, clip / ||x_u||_2)``: the statistic before noise, the weights (private)."""
    norms = np.sqrt(np.asarray(contributions.multiply(contributions).sum(axis=1)).ravel())
    with np.errstate(divide="ignore"):
        w = np.minimum(1.0, np.where(norms > 0, clip / np.maximum(norms, 1e-300), 1.0))
    return np.asarray(contributions.T @ w, dtype=float).ravel(), w


def sensitivity(design: CoherenceDesign, clip: float, unit: str, neighbours: str) -> float:
    """L2 sensitivity of the clipped sum (module docstring: derivation)."""
    check_option(unit, "unit", UNITS)
    check_option(neighbours, "neighbours", NEIGHBOURS)
    base = neighbour_factor(neighbours) * check_real(clip, "clip", low=0.0)
    if unit == "document":
        return min(base, default_clip(design))
    return base


def pair_npmi(S: np.ndarray, design: CoherenceDesign, floor: float = 0.0) -> np.ndarray:
    """Plug-in NPMI of every design pair from sums ``S`` (..., D), counts clipped to ``[floor, N]`` and below words'."""
    S = np.asarray(S, dtype=float)
    U = len(design.words)
    N = np.maximum(S[..., :1], 1.0)
    f = float(floor)
    cw = np.clip(S[..., 1:1 + U], np.minimum(f, N), N)
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    cap = np.minimum(cw[..., a], cw[..., b])
    cp = np.clip(S[..., 1 + U:], np.minimum(f, cap), cap)
    return npmi_from_counts(N, cw[..., a], cw[..., b], cp)


def topic_summary(v: np.ndarray, design: CoherenceDesign) -> dict:
    """Per-topic NPMI, across NPMI and contrast, and their means over topics, from pair NPMIs ``v`` (..., P)."""
    within = np.stack([v[..., idx].mean(axis=-1) for idx in design.within], axis=-1)
    if all(idx.size for idx in design.across):
        across = np.stack([v[..., idx].mean(axis=-1) for idx in design.across], axis=-1)
    else:
        across = np.full(within.shape, np.nan)
    return {"npmi": within, "across": across, "contrast": within - across,
            "mean_npmi": within.mean(axis=-1), "mean_contrast": within.mean(axis=-1) - across.mean(axis=-1)}


def topic_values(S: np.ndarray, design: CoherenceDesign, floor: float = 0.0) -> dict:
    """:func:`topic_summary` of the plug-in pair NPMIs of sums ``S`` (exact when ``S`` is noiseless)."""
    return topic_summary(pair_npmi(S, design, floor), design)


#: grid of t = log(df_ab / m_ab), m_ab = df_a df_b / N the count expected under independence (PMI in nats)
T_GRID = np.linspace(-5.0, 7.0, 241)
#: pairs whose noisy count exceeds this many sigma are read by the plug-in (its log bias, about
#: sigma^2 / (2 df^2) <= 0.02 nats, is below what the grid of the empirical-Bayes step resolves)
PLUGIN_SIGMAS = 5.0
#: the largest half-width of the mean NPMI's interval that is given: wider, the noise leaves the value undetermined
#: (a quarter of NPMI's range [-1, 1]) and the intervals are refused (:func:`interval_refusal`)
MAX_HALF_WIDTH = 0.5


def _word_terms(S: np.ndarray, design: CoherenceDesign) -> tuple[float, np.ndarray]:
    """``(N, df_a)`` from sums ``S`` (D,): N at least 1, word counts in [1, N]."""
    N = max(float(S[0]), 1.0)
    return N, np.clip(S[1:1 + len(design.words)], 1.0, N)


def _npmi_of_counts(c: np.ndarray, N: float, cw: np.ndarray, design: CoherenceDesign) -> np.ndarray:
    """NPMI of every pair (first axis) for pair counts ``c`` (P, ...) capped at ``min(df_a, df_b)``."""
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    shape = (-1,) + (1,) * (c.ndim - 1)
    c = np.clip(c, 1e-3, np.minimum(cw[a], cw[b]).reshape(shape))
    return npmi_from_counts(N, cw[a].reshape(shape), cw[b].reshape(shape), c)


def _groups(design: CoherenceDesign, logm: np.ndarray, n_bins: int) -> list[np.ndarray]:
    """Within and across pairs, each cut into ``n_bins`` bins of log m (quantiles): pairs of a bin share a prior."""
    within = np.zeros(design.pairs.shape[0], dtype=bool)
    for idx in design.within:
        within[idx] = True
    out: list[np.ndarray] = []
    for grp in (within, ~within):
        if not grp.any():
            continue
        k = max(1, min(n_bins, int(grp.sum()) // 20))
        edges = np.quantile(logm[grp], np.linspace(0.0, 1.0, k + 1)[1:-1])
        bins = np.digitize(logm, edges)
        out.extend(grp & (bins == i) for i in range(k) if np.any(grp & (bins == i)))
    return out


def _npmle(loglik: np.ndarray, n_iter: int = 200) -> np.ndarray:
    """Log-weights of the NPMLE prior on the grid (Kiefer & Wolfowitz 1956), by EM (Laird 1978, JASA, Sec. 3)."""
    L = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    g = np.full(L.shape[1], 1.0 / L.shape[1])
    for _ in range(n_iter):
        g = g * (L.T @ (1.0 / np.maximum(L @ g, 1e-300))) / L.shape[0]
    return np.log(np.maximum(g, 1e-300))


def eb_posterior(S: np.ndarray, design: CoherenceDesign, sigma: float, n_bins: int = 4) -> np.ndarray:
    """Each pair's NPMI: the posterior mean ``sum_t g(t) phi((S_ab - c(t)) / sigma) NPMI(c(t))`` normalised, g the
    NPMLE of the pair's group; pairs above ``PLUGIN_SIGMAS`` sigma take the plug-in."""
    S = np.asarray(S, dtype=float)
    N, cw = _word_terms(S, design)
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    logm = np.log(cw[a]) + np.log(cw[b]) - math.log(N)
    obs = S[1 + len(design.words):]
    c = np.exp(logm[:, None] + T_GRID[None, :])
    loglik = -0.5 * ((obs[:, None] - np.minimum(c, np.minimum(cw[a], cw[b])[:, None])) / sigma) ** 2
    L = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    W = np.zeros_like(L)
    for mask in _groups(design, logm, n_bins):
        w = np.exp(_npmle(loglik[mask]))[None, :] * L[mask]
        W[mask] = w / np.maximum(w.sum(axis=1, keepdims=True), 1e-300)
    return np.where(obs > PLUGIN_SIGMAS * sigma, _npmi_of_counts(obs, N, cw, design),
                    (W * _npmi_of_counts(c, N, cw, design)).sum(axis=1))


def exact_values(corpus, design: CoherenceDesign, unit: str = "document", clip: float | None = None) -> dict:
    """The exact values estimated (private: the owner's diagnostics): by the held-out measure (contrast against every
    across pair), or with ``clip`` the value on the clipped corpus at ``unit`` (over the sampled across pairs)."""
    if clip is not None:
        return topic_values(clipped_sum(unit_contributions(corpus, design, unit), clip)[0], design)
    U = len(design.words)
    B = sp.csc_matrix(document_indicators(corpus, design)[:, 1:1 + U])
    S, C = _pair_sums(design.top, B, np.arange(U))
    c = _contrast_from(S, C) if design.n_topics >= 2 else None
    within = np.diag(S) / np.diag(C)
    nan = np.full(design.n_topics, np.nan)
    return {"npmi": within, "mean_npmi": float(within.mean()),
            "contrast": nan if c is None else c["per_topic"],
            "mean_contrast": math.nan if c is None else c["contrast"]}


@dataclass(frozen=True)
class PrivateEvaluation:
    """The private coherence of a release's topics, a DP output: estimates (K,), intervals (K, 2) at ``level``,
    ``sd_mean_npmi`` (half the mean's interval over z), a ``report`` (JSON), why intervals are NaN (interval_refused).
    """

    npmi: np.ndarray
    contrast: np.ndarray
    npmi_interval: np.ndarray
    contrast_interval: np.ndarray
    mean_npmi: float
    mean_contrast: float
    mean_npmi_interval: tuple
    mean_contrast_interval: tuple
    level: float
    sd_mean_npmi: float
    report: dict
    top_words: tuple = field(default=(), repr=False)
    noisy_sums: np.ndarray | None = field(default=None, repr=False)
    interval_refused: str | None = None

    def to_dict(self) -> dict:
        """JSON-serialisable published form (every value is DP or post-processing)."""
        def num(v):
            return None if not np.isfinite(v) else float(v)

        def arr(x):
            return [num(v) for v in np.ravel(x)]
        return {
            "format": "topicdp.evaluation/1",
            "topics": [{"top_words": list(t), "npmi": float(self.npmi[k]),
                        "npmi_interval": arr(self.npmi_interval[k]), "contrast": num(self.contrast[k]),
                        "contrast_interval": arr(self.contrast_interval[k])}
                       for k, t in enumerate(self.top_words)],
            "mean_npmi": float(self.mean_npmi), "mean_npmi_interval": arr(self.mean_npmi_interval),
            "mean_contrast": num(self.mean_contrast),
            "mean_contrast_interval": arr(self.mean_contrast_interval),
            "level": self.level,
            "interval_refused": self.interval_refused,
            "report": self.report,
        }

    def summary(self) -> str:
        r = self.report
        pct = f"{100 * self.level:g}%"
        lines = [f"private evaluation: ({r['epsilon']:g}, {r['delta']:g})-DP for each {r['unit']}, "
                 f"{r['neighbours']} neighbours" + ("; SEEDED: do not publish" if r["seeded"] else ""),
                 f"sigma {r['sigma']:.4g}: {r['sigma_meaning']}; L2 sensitivity {r['sensitivity']:.4g} "
                 f"(clip {r['clip']:.4g})",
                 f"mean NPMI {self.mean_npmi:.3f} [{self.mean_npmi_interval[0]:.3f}, "
                 f"{self.mean_npmi_interval[1]:.3f}] ({pct} interval)"]
        if self.interval_refused:
            lines.append(f"INTERVALS REFUSED: {self.interval_refused}")
        if np.isfinite(self.mean_contrast):
            lines.append(f"mean contrast {self.mean_contrast:.3f} [{self.mean_contrast_interval[0]:.3f}, "
                         f"{self.mean_contrast_interval[1]:.3f}]")
        for k, t in enumerate(self.top_words):
            c = "" if not np.isfinite(self.contrast[k]) else f"  contrast {self.contrast[k]:+.3f}"
            lines.append(f"  topic {k}: NPMI {self.npmi[k]:+.3f} [{self.npmi_interval[k, 0]:+.3f}, "
                         f"{self.npmi_interval[k, 1]:+.3f}]{c}  {' '.join(t)}")
        return "\n".join(lines)


def default_clip(design: CoherenceDesign) -> float:
    """``sqrt(1 + U + P)``, the largest L2 norm of one document's contribution: the default clipping norm, at which
    no document is ever clipped."""
    return math.sqrt(design.dimension)


def calibrate(design: CoherenceDesign, epsilon: float, delta: float, unit: str, neighbours: str,
              clip: float | None = None) -> tuple[float, float, float]:
    """``(sigma, sensitivity, clip)`` of the evaluation at (epsilon, delta): the analytic Gaussian mechanism."""
    from ..rdp import calibrate_gaussian

    clip = default_clip(design) if clip is None else check_real(clip, "clip", low=0.0)
    D = sensitivity(design, clip, unit, neighbours)
    return calibrate_gaussian(epsilon, delta, D, method="analytic"), D, clip


def planned_entries(design: CoherenceDesign, epsilon: float, delta: float, unit: str, neighbours: str,
                    clip: float | None = None) -> list:
    """The evaluation's ledger entries (one Gaussian release at :func:`calibrate`'s sigma), from public facts only:
    what :func:`private_coherence` checks, records and reports, and what a caller checks before reading the corpus."""
    from ..rdp.ledger import GaussianEntry

    sigma, D, _ = calibrate(design, epsilon, delta, unit, neighbours, clip)
    return [GaussianEntry("private evaluation (NPMI, contrast)", sigma, D, unit=unit, neighbours=neighbours)]


def point_estimate(noisy: np.ndarray, design: CoherenceDesign, sigma: float, n_bins: int = 4) -> dict:
    """The estimates (:func:`eb_posterior`), summarised per topic and over topics (:func:`topic_summary`)."""
    return topic_summary(eb_posterior(np.asarray(noisy, dtype=float), design, sigma, n_bins), design)


def estimate(noisy: np.ndarray, design: CoherenceDesign, sigma: float, *, level: float = 0.9, n_boot: int = 50,
             n_bins: int = 4, random_state=None) -> dict:
    """Estimates (moved into their :func:`bound_intervals` where the shrinkage put them outside) and ``*_interval``,
    ``sd_mean_npmi`` and ``resolved`` (the share of pairs read by the plug-in); ``n_boot``, ``random_state`` unused."""
    level = check_real(level, "level", low=0.0, high=1.0)
    check_int(n_boot, "n_boot", low=10)
    noisy = np.asarray(noisy, dtype=float)
    values = eb_posterior(noisy, design, sigma, n_bins)
    point = topic_summary(values, design)
    bounds = bound_intervals(noisy, design, sigma, level, values)
    out: dict[str, Any] = {}
    for key in ("npmi", "contrast", "mean_npmi", "mean_contrast"):
        lo, hi = bounds[key]
        out[key] = np.clip(point[key], lo, hi) if np.all(np.isfinite(lo)) else point[key]
        out[key + "_interval"] = np.stack([lo, hi], axis=-1)
    lo, hi = bounds["mean_npmi"]
    out["sd_mean_npmi"] = float(hi - lo) / 2.0 / float(stats.norm.ppf(0.5 + level / 2.0))
    out["resolved"] = float(np.mean(bounds["resolved"]))
    return out


def _pair_ranges(noisy: np.ndarray, design: CoherenceDesign, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` (Q, P): each pair's NPMI range over the integer counts within ``r[q]`` of the noisy ones.

    NPMI rises with the pair count and N (``df/d log N = log(df_a df_b / c^2) / h_ab^2 >= 0``) and falls with each word
    count: the ends are the box's corners (brute-forced in the tests); ``lo`` is -1 where c = N is possible.
    """
    U = len(design.words)
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    r = np.asarray(r, dtype=float)[:, None]
    n, w, c = noisy[0], noisy[1:1 + U], noisy[1 + U:]
    N_lo, N_hi = np.maximum(n - r, 1.0), np.maximum(n + r, 1.0)
    c_lo = np.ceil(np.maximum(c[None, :] - r, 0.0))
    da, db = np.minimum(np.maximum(w[a] + r, 1.0), N_lo), np.minimum(np.maximum(w[b] + r, 1.0), N_lo)
    lo = npmi_from_counts(N_lo, np.maximum(da, c_lo), np.maximum(db, c_lo), np.minimum(c_lo, N_lo))
    lo = np.where(c_lo >= N_lo, -1.0, lo)  # c = N is NPMI's 0 / 0 (1 by convention, -1 just above): no bound
    c_hi = np.minimum(np.floor(np.maximum(c[None, :] + r, 0.0)), N_hi)
    da, db = np.clip(w[a] - r, np.maximum(c_hi, 1.0), N_hi), np.clip(w[b] - r, np.maximum(c_hi, 1.0), N_hi)
    hi = npmi_from_counts(N_hi, da, db, c_hi)
    return lo, np.maximum(hi, lo)


def _plugin_gradient(noisy: np.ndarray, design: CoherenceDesign) -> tuple[np.ndarray, np.ndarray]:
    """Plug-in NPMI of every pair and its gradient (P, 4) in (N, df_a, df_b, df_ab), ``h_s = h_a + h_b``:
    ``(2 h_ab - h_s) / (h_ab^2 N)``, ``-1 / (h_ab df_a)``, ``-1 / (h_ab df_b)``, ``h_s / (h_ab^2 c)``."""
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    N, w = _word_terms(noisy, design)
    c = np.clip(noisy[1 + len(design.words):], 1.0, np.minimum(w[a], w[b]))
    hs, hp = np.log(N / w[a]) + np.log(N / w[b]), np.maximum(np.log(N / c), 1e-9)
    grad = np.stack([(2 * hp - hs) / (hp ** 2 * N), -1.0 / (hp * w[a]), -1.0 / (hp * w[b]), hs / (hp ** 2 * c)], 1)
    return np.clip(hs / hp - 1.0, -1.0, 1.0), grad


def _quantity_weights(design: CoherenceDesign) -> np.ndarray:
    """W (2K + 2, P): each topic's NPMI and contrast, then their means, as weighted sums of pair NPMIs."""
    K, P = design.n_topics, design.pairs.shape[0]
    within, across = np.zeros((K, P)), np.zeros((K, P))
    for k in range(K):
        np.add.at(within[k], design.within[k], 1.0 / design.within[k].size)
        if design.across[k].size:
            np.add.at(across[k], design.across[k], 1.0 / design.across[k].size)
    return np.vstack([within, within - across, within.mean(0, keepdims=True),
                      (within - across).mean(0, keepdims=True)])


def bound_intervals(noisy: np.ndarray, design: CoherenceDesign, sigma: float, level: float = 0.9,
                    values: np.ndarray | None = None) -> dict:
    """Intervals at ``level`` for each topic's NPMI and contrast and their means, whatever the estimator's bias.

    A quantity ``sum_i w_i NPMI_i`` splits into resolved pairs (all counts above ``PLUGIN_SIGMAS`` sigma), read by the
    plug-in with the delta method's normal term, and the others, bounded by their range within ``z_B`` sigma
    (:func:`_pair_ranges`, Bonferroni); alpha is split in halves (union bound; per interval, not simultaneous).
    """
    alpha = 1.0 - level
    U = len(design.words)
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    noisy = np.asarray(noisy, dtype=float)
    k = PLUGIN_SIGMAS * sigma
    res = (noisy[1 + U:] > k) & (noisy[1 + a] > k) & (noisy[1 + b] > k) & (noisy[0] > k)
    W = _quantity_weights(design)
    f, g = _plugin_gradient(noisy, design)
    Wr, Wu = W * res, W * ~res
    unres = np.abs(Wu) > 0
    n_coords = 1 + unres.sum(1) + np.array([np.unique(np.r_[a[u], b[u]]).size for u in unres])
    r = stats.norm.ppf(1.0 - alpha / 4.0 / n_coords) * sigma
    lo, hi = _pair_ranges(noisy, design, r)
    box_lo = (np.maximum(Wu, 0) * lo).sum(1) + (np.minimum(Wu, 0) * hi).sum(1)
    box_hi = (np.maximum(Wu, 0) * hi).sum(1) + (np.minimum(Wu, 0) * lo).sum(1)
    grad_w = np.zeros((W.shape[0], U))
    for col, idx in ((1, a), (2, b)):
        np.add.at(grad_w.T, idx, (Wr * g[:, col]).T)
    var = sigma ** 2 * ((Wr @ g[:, 0]) ** 2 + (grad_w ** 2).sum(1) + ((Wr * g[:, 3]) ** 2).sum(1))
    samp = _across_sampling_variance(f if values is None else np.asarray(values, dtype=float), design)
    var = var + np.r_[np.zeros(design.n_topics), samp, 0.0, samp.sum() / design.n_topics ** 2]
    z = stats.norm.ppf(1.0 - np.where(unres.any(1), alpha / 4.0, alpha / 2.0))
    centre = Wr @ f
    lower, upper = centre + box_lo - z * np.sqrt(var), centre + box_hi + z * np.sqrt(var)
    K = design.n_topics
    out: dict = {"resolved": res, "npmi": (lower[:K], upper[:K]), "contrast": (lower[K:2 * K], upper[K:2 * K]),
                 "mean_npmi": (float(lower[2 * K]), float(upper[2 * K])),
                 "mean_contrast": (float(lower[2 * K + 1]), float(upper[2 * K + 1]))}
    if not all(idx.size for idx in design.across):
        out["contrast"] = (np.full(K, np.nan), np.full(K, np.nan))
        out["mean_contrast"] = (math.nan, math.nan)
    return out


def _across_sampling_variance(v: np.ndarray, design: CoherenceDesign) -> np.ndarray:
    """Per topic, ``var / m (1 - m / M)`` of the sampled across NPMIs (Cochran 1977, Eq. 2.16)."""
    out = np.zeros(design.n_topics)
    for k, idx in enumerate(design.across):
        m, M = idx.size, int(design.n_across_total[k])
        if m >= 2 and M > 0:
            out[k] = float(np.var(v[idx], ddof=1)) / m * max(0.0, 1.0 - m / M)
    return out


def private_coherence(top_words: Sequence[Sequence[str]], corpus, *, epsilon: float, delta: float,
                      unit: str = "document", neighbours: str = "add-remove", clip: float | None = None,
                      n_across: int | None = None, design_seed: int = 0,
                      level: float = 0.9, n_boot: int = 50, ledger=None, random_state=None) -> PrivateEvaluation:
    """Each topic's NPMI and NPMI contrast on ``corpus`` under (epsilon, delta)-DP (module docstring).

    Parameters
    ----------
    top_words : K lists of n str
        Public top lists; matched to the corpus' words by spelling.
    corpus : topicdp.Corpus
        The owner's private corpus.
    clip : float > 0, optional
        Per-unit L2 clipping norm C; default :func:`default_clip`.
    n_across, design_seed : int >= 0, optional
        The design's across pairs per topic and public seed (:func:`coherence_design`).
    level, n_boot : float in (0, 1), int >= 10
        Nominal coverage of the intervals; ``n_boot`` is unused, accepted for callers' options.
    ledger : topicdp.rdp.PrivacyLedger, optional
        Checked before the corpus is read and charged before the noise is drawn.
    random_state : None, int or Generator
        Seeds the noise (testing only: the report marks it seeded).
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    check_option(unit, "unit", UNITS)
    check_option(neighbours, "neighbours", NEIGHBOURS)
    design = coherence_design(top_words, n_across=n_across, seed=design_seed)
    clip = default_clip(design) if clip is None else check_real(clip, "clip", low=0.0)
    entries = planned_entries(design, epsilon, delta, unit, neighbours, clip)
    sigma, D = entries[0].sigma, entries[0].sensitivity
    if ledger is not None:
        ledger.check(entries)
    S = clipped_sum(unit_contributions(corpus, design, unit), clip)[0]
    if ledger is not None:
        ledger.record(entries)
    rng = check_random_state(random_state)
    noisy = S + rng.normal(0.0, sigma, size=S.size)
    del S
    est = estimate(noisy, design, sigma, level=level, n_boot=n_boot, random_state=rng)
    refused = interval_refusal(design, unit, clip, est["mean_npmi_interval"])
    if refused is not None:
        for key in ("npmi", "contrast", "mean_npmi", "mean_contrast"):
            est[key + "_interval"] = np.full(np.shape(est[key + "_interval"]), np.nan)
    report = {
        "mechanism": MECHANISM, "guarantee": "approx-DP", "epsilon": epsilon, "delta": delta, "unit": unit,
        "neighbours": neighbours, "sigma": sigma, "sigma_meaning": SIGMA_MEANING, "sensitivity": D,
        "sensitivity_method": ("global bound: per-unit L2 clipping at C" +
                               (", at most sqrt(1 + U + P) for a document" if unit == "document" else "") +
                               (" (x sqrt(2) for replace-one)" if neighbours == "replace-one" else "")),
        "calibration": "analytic", "clip": clip, "n_words": len(design.words), "n_pairs": int(design.pairs.shape[0]),
        "dimension": design.dimension, "n_across": int(design.across[0].size) if design.across else 0,
        "design_seed": design_seed, "estimator": "empirical Bayes (NPMLE prior per group of pairs)", "level": level,
        "seeded": random_state is not None,
        "interval": ("plug-in with a delta-method normal term for the pairs the noise resolves (above "
                     f"{PLUGIN_SIGMAS:g} sigma), each other pair's range over its counts' confidence box: it holds "
                     "the exact value whatever the estimator's shrinkage (bias) when no unit is clipped"),
        "interval_refused": refused,
        "resolved_share": est["resolved"],
        "published": {"noisy sums": "DP", "estimates and intervals": "post-processing"},
    }
    return PrivateEvaluation(
        npmi=est["npmi"], contrast=est["contrast"], npmi_interval=est["npmi_interval"],
        contrast_interval=est["contrast_interval"], mean_npmi=float(est["mean_npmi"]),
        mean_contrast=float(est["mean_contrast"]), mean_npmi_interval=tuple(map(float, est["mean_npmi_interval"])),
        mean_contrast_interval=tuple(map(float, est["mean_contrast_interval"])), level=level,
        sd_mean_npmi=est["sd_mean_npmi"], report=report, top_words=tuple(tuple(t) for t in top_words),
        noisy_sums=noisy, interval_refused=refused)


def interval_refusal(design: CoherenceDesign, unit: str, clip: float | None, mean_interval=None,
                     max_half_width: float = MAX_HALF_WIDTH) -> str | None:
    """Why no interval is given for the exact values (None: it is), from public facts and the DP output: the interval
    is of the clipped value, exact only when no unit can be clipped (never at the user level; at the document level
    with ``clip >= sqrt(1 + U + P)``; ``clip`` None: :func:`default_clip`), and a mean interval wider than
    ``2 max_half_width`` leaves it undetermined. Without ``mean_interval``: the refusal whatever the noise draws,
    which ``topicdp compare`` and ``topicdp evaluate`` ask before an evaluation spends anything.
    """
    clip = default_clip(design) if clip is None else clip
    if unit == "document" and mean_interval is not None and clip >= default_clip(design) * (1.0 - 1e-12):
        half = (float(mean_interval[1]) - float(mean_interval[0])) / 2.0
        if half > max_half_width:
            return (f"too few units for the noise: the mean NPMI's interval spans +-{half:.2f} (over "
                    f"{max_half_width:g}): the exact values are undetermined at this epsilon; spend more, or "
                    "evaluate on more documents")
    if unit == "user":
        return ("user level: clipping each user's counts at C moves the value by an amount no public fact bounds "
                "(a user may hold any number of documents), so no interval for the exact NPMI is given")
    if clip < default_clip(design) * (1.0 - 1e-12):
        return (f"clip {clip:.4g} below a document's largest norm {default_clip(design):.4g}: clipped documents "
                "move the value by an amount no public fact bounds, so no interval for the exact NPMI is given")
    return None


@dataclass(frozen=True)
class ErrorForecast:
    """What :func:`predict_error` expects of a private evaluation, from public facts only."""

    epsilon: float
    sigma: float
    quantile: float
    probability: float
    bias: float
    #: median half-width of the mean NPMI's 90% interval over the simulated draws
    half_width: float = math.nan
    #: why the intervals would be refused (:func:`interval_refusal` of the median half-width), or None
    refused: str | None = None

    def line(self) -> str:
        text = (f"epsilon {self.epsilon:g} (sigma {self.sigma:.4g}): |error of the mean NPMI| <= {self.quantile:.3g} "
                f"with probability {self.probability:g} (simulated bias {self.bias:+.3g})")
        if math.isfinite(self.half_width):
            text += f"; interval +-{self.half_width:.3g}"
        return text + (f"; intervals would be REFUSED: {self.refused}" if self.refused else "")


def reference_rates(reference, design: CoherenceDesign, unit: str = "document",
                    clip: float | None = None) -> np.ndarray:
    """The clipped statistic of a public corpus per unit, ``S / n_units`` (``clip=math.inf``: unclipped rates)."""
    clip = default_clip(design) if clip is None else clip
    x = unit_contributions(reference, design, unit)
    return clipped_sum(x, clip)[0] / max(x.shape[0], 1)


def predict_error(design: CoherenceDesign, rates: np.ndarray, n_units: float, *, epsilon: float, delta: float,
                  unit: str = "document", neighbours: str = "add-remove", clip: float | None = None,
                  target_rates: np.ndarray | None = None, probability: float = 0.9, n_sim: int = 100,
                  seed: int = 0) -> ErrorForecast:
    """Expected error of the private mean NPMI at (epsilon, delta), before spending: sums simulated ``n_sim`` times as
    ``rates * n_units`` (a public corpus' :func:`reference_rates`; ``n_units`` stated or DP) plus the calibrated noise,
    from the public ``seed``; the error measured against ``target_rates`` (unclipped: what clipping moves) if given.
    """
    n_units = check_real(n_units, "n_units", low=0.0)
    probability = check_real(probability, "probability", low=0.0, high=1.0)
    n_sim = check_int(n_sim, "n_sim", low=10)
    sigma, _, clip = calibrate(design, epsilon, delta, unit, neighbours, clip)
    S = np.asarray(rates, dtype=float) * n_units
    target = S if target_rates is None else np.asarray(target_rates, dtype=float) * n_units
    truth = topic_values(target, design)["mean_npmi"]
    rng = np.random.default_rng(seed)
    err, half = [], []
    for _ in range(n_sim):
        est = estimate(S + rng.normal(0.0, sigma, S.size), design, sigma)
        err.append(est["mean_npmi"] - truth)
        half.append((est["mean_npmi_interval"][1] - est["mean_npmi_interval"][0]) / 2.0)
    h = float(np.median(half))
    return ErrorForecast(epsilon=float(epsilon), sigma=sigma, quantile=float(np.quantile(np.abs(err), probability)),
                         probability=probability, bias=float(np.mean(err)), half_width=h,
                         refused=interval_refusal(design, unit, clip, (-h, h)))
