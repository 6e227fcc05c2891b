"""Private evaluation of a release: each topic's NPMI and NPMI contrast on the owner's corpus, under DP.

A release's top words (K lists of n = 10 words) are public once released. How coherent they are on the private
corpus is not: reading the exact NPMI (:func:`topicdp.metrics.heldout_npmi`) to decide anything is a release
nobody accounts for. :func:`private_coherence` releases it under (epsilon, delta)-DP at the release's unit
(document or user), with a confidence interval that accounts for the noise, and charges a ledger.

The statistic
-------------
Document NPMI (Bouma 2009; Lau, Newman & Baldwin 2014, as in :mod:`topicdp.metrics.readability`) of a pair
(a, b) depends on three document frequencies and the number of documents N:

    NPMI(a, b) = log(P(a, b) / (P(a) P(b))) / -log P(a, b) = (h_a + h_b) / h_ab - 1,     h_x = log(N / df_x).

What is counted (the *design*, a public function of the lists and a public seed): the U distinct top words,
and P distinct word pairs: every within-topic pair (K n (n - 1) / 2 at most) and, for the contrast, ``n_across``
pairs per topic drawn uniformly (public seed) among the across-topic pairs (a in the topic's list, b in another's,
a != b). Each *unit* u (a document, or all of a user's documents) contributes the vector

    x_u = sum over u's documents d of (1, [a in d] for the U words, [a in d and b in d] for the P pairs),

of dimension D = 1 + U + P: the number of its documents, its word and pair document frequencies. Only top words
are read; nothing else of a document enters.

Bounded contributions. The unit's vector is scaled to L2 norm at most C (``clip``):
``w_u = min(1, C / ||x_u||)`` and the released sum is ``S = sum_u w_u x_u + N(0, sigma^2 I_D)`` (Abadi et al.
2016, Sec. 3.1, the per-example clipping of DP-SGD). Only the weights change what is estimated: with every
``w_u = 1`` (no unit over C) S is the exact statistic, and otherwise the NPMI of a weighted corpus in which the
clipped units count ``w_u`` times. At the document level the default C is the worst case
``sqrt(1 + U + P)``: no document is ever clipped and the estimand is the exact NPMI.

L2 sensitivity (derivation; checked by brute force over every word set of small designs in the tests):

* add/remove: the sum changes by ``w_u x_u``, of norm ``min(||x_u||, C) <= C``. At the document level the
  entries of ``x_u`` are 0/1 and ``||x_u||^2 = 1 + |S| + #{design pairs inside S}`` for the set S of top words
  the document holds, at most ``1 + U + P`` (S = all words), so ``Delta = min(C, sqrt(1 + U + P))``.
* replace-one: the sum changes by ``w x - w' x'``. For two non-negative vectors of norm at most C,
  ``||w x - w' x'||^2 = ||w x||^2 + ||w' x'||^2 - 2 <w x, w' x'> <= 2 C^2`` (the inner product is >= 0), with
  equality for disjoint supports, so ``Delta = sqrt(2) C``. At the document level every entry of ``w x`` lies in
  [0, 1], so each coordinate of the difference lies in [-1, 1] and ``Delta <= sqrt(D) = sqrt(1 + U + P)`` too:
  ``Delta = min(sqrt(2) C, sqrt(1 + U + P))``.

Noise. sigma is the analytic Gaussian mechanism's (Balle & Wang 2018, Thm. 8,
:func:`topicdp.rdp.calibrate_gaussian`) for (epsilon, delta) and Delta; the release is one Gaussian entry in the
ledger (``sigma``, ``Delta``, the unit and neighbour relation).

The estimator
-------------
The plug-in (the formula on the noisy counts) fails where a pair's count is near sigma: ``log`` of a noisy small
count is dominated by the noise, and any floor that keeps it finite biases it (on blogs at epsilon 1 the plug-in's
mean error was -0.020 with counts floored at 1 and +0.031 floored at sigma). The word counts and N are large and precise; the pair counts are
the problem. So each pair count is estimated by empirical Bayes (g-modelling, Efron 2016, "Empirical Bayes
deconvolution estimates", Biometrika 103(1)): write ``df_ab = m_ab e^t`` with ``m_ab = df_a df_b / N`` (the count
under independence, from the noisy word counts) and t the pair's PMI; within a group of pairs t has a prior g, the
noisy count is ``N(m_ab e^t, sigma^2)``, g is the nonparametric maximum-likelihood prior on a grid of t (EM, Laird
1978), and a pair's NPMI is its posterior mean. Groups: within or across pairs, each cut into 4 bins of m (pairs of
rare words have other PMIs than pairs of common words; one prior for all biased blogs' mean NPMI by -0.02 at
sigma 130). A topic's NPMI is the mean over its within pairs, its across NPMI the mean over its sampled across pairs,
its contrast the difference; the corpus-level values are their means over topics (:func:`npmi_contrast` uses the
pooled across mean, which is the mean of the per-topic ones when no word is in two lists).

One measure. The pair function is :func:`topicdp.metrics.readability.npmi_from_counts`, the one
:func:`~topicdp.metrics.readability.heldout_npmi` uses: N counts every document of the corpus (those holding no top
word too), a pair that never co-occurs (or holds a word no document has) scores -1, one in every document 1. The
exact value (:func:`exact_values`, also what ``topicdp compare`` shows the owner) is computed by it on the same
lists, and the estimator's grid values are too; the contrast's exact value is over *every* across pair.

The interval (:func:`bound_intervals`). Shrinkage makes the empirical-Bayes estimate of a pair whose count is
within a few sigma of 0 mostly its group's prior: the estimate of a list of unrelated words (exact NPMI near -1) is
pulled up towards what the other pairs of its group look like, and an interval for the noise alone (a bootstrap
around that estimate) misses by the bias. So the interval does not lean on the prior. A quantity (a topic's NPMI,
its contrast, their means) is a weighted sum ``sum_i w_i NPMI_i`` of pair values. The pairs whose count, words'
counts and N are all above ``PLUGIN_SIGMAS`` sigma enter by the plug-in with the delta method's normal term (the
gradient over every coordinate they read, so shared words and N are counted once). Every other pair enters by its
*range*: the smallest and largest NPMI over the integer counts within ``z_B sigma`` of the noisy ones, ``z_B`` the
Bonferroni quantile over the coordinates the quantity's unresolved pairs read; NPMI is monotone in each count
(:func:`_pair_ranges`: rising in the pair count and N, falling in the word counts), so the range is at two corners
of the box. alpha = 1 - level is split between the two parts (union bound): each interval holds its exact value
with probability at least ``level``, up to the normal approximation of the resolved part, whatever the estimator's
bias. The contrast's sampled across mean adds its sampling variance (``var / m (1 - m / M)``, Cochran 1977,
"Sampling Techniques", Eq. 2.16). The point estimate (empirical Bayes) is moved into its interval if the shrinkage
put it outside. All of this is post-processing of S and sigma: no further privacy cost.

Refusals (:func:`interval_refusal`). The interval holds the exact value only when no unit can be clipped: at the
user level a user's contribution has no public bound, so clipping's shift has none either, and the intervals are
refused (NaN, with the reason in the result, its summary and its JSON). At the document level, where the noise
leaves the mean NPMI's interval wider than +-``MAX_HALF_WIDTH`` (too few documents for the noise), the intervals
are refused as undetermined rather than printed as if they ranked anything. Coverage by held-out size, unit and
list: ``docs/results/private_interval_coverage.md``.

Prediction before spending (:func:`predict_error`): the same estimator run on simulated sums ``rates * n`` plus
noise at the calibrated sigma, where ``rates = S / N`` of the statistic on a *public* corpus of the same kind (or a
stated guess) and n a stated (or DP) number of units; it gives the probability quantile of the absolute error of the
mean NPMI, the median half-width of its interval and whether the intervals would be refused (:class:`ErrorForecast`),
and :func:`predict_epsilon` the smallest epsilon on a grid whose quantile meets a tolerance.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp
from scipy import stats

from .._names import NEIGHBOURS, UNITS
from .._validation import check_delta, check_epsilon, check_int, check_option, check_random_state, check_real

MECHANISM = "private-evaluation"
SIGMA_MEANING = ("std of the Gaussian noise on each of the D = 1 + U + P clipped per-unit sums (number of "
                 "documents, document frequencies of the U top words and of the P word pairs)")


# -- the design: what is counted (public) --------------------------------------------------------------


@dataclass(frozen=True)
class CoherenceDesign:
    """What the private evaluation counts: a public function of the top lists and a public seed.

    Attributes
    ----------
    words : tuple of str
        The U distinct top words (sorted).
    top : ndarray (K, n)
        Each topic's list as indices into ``words``.
    pairs : ndarray (P, 2)
        Distinct word pairs (indices into ``words``, first < second): within-topic pairs, then sampled across pairs.
    within : tuple of K int arrays
        Rows of ``pairs`` of each topic's within pairs (n (n - 1) / 2 each).
    across : tuple of K int arrays
        Rows of ``pairs`` of each topic's sampled across pairs (with repeats when a pair is drawn twice).
    n_across_total : ndarray (K,)
        M_k, the number of across pairs of each topic the sample was drawn from (for the finite-population term).
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

    def worst_case_norm(self) -> float:
        """``sqrt(1 + U + P)``: the largest L2 norm of one document's contribution (a document with every word)."""
        return math.sqrt(self.dimension)


def coherence_design(top_words: Sequence[Sequence[str]], *, n_across: int | None = None,
                     seed: int = 0) -> CoherenceDesign:
    """The design for K top lists (module docstring): within pairs, and ``n_across`` across pairs per topic.

    Parameters
    ----------
    top_words : K sequences of n distinct str
        The released top lists (K >= 1, n >= 2).
    n_across : int, optional
        Across pairs drawn per topic for the contrast; default n (n - 1) / 2 (as many as within pairs); 0 for
        none (NPMI only: a smaller sensitivity); at K = 1 there are none.
    seed : int, default 0
        Public seed of the draw (it must not depend on the data).
    """
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
        draw = rng.integers(0, len(cand), size=n_across)
        across.append(np.array([pid(*cand[i]) for i in draw], dtype=np.int64))
    pairs = np.array(sorted(pair_index, key=lambda p: pair_index[p]), dtype=np.int64).reshape(-1, 2)
    return CoherenceDesign(words=words, top=top, pairs=pairs, within=within, across=tuple(across),
                           n_across_total=np.array(totals, dtype=np.int64))


# -- per-unit contributions and the clipped sum (private) -------------------------------------------------


def _columns(corpus, words: Sequence[str]) -> np.ndarray:
    index = {w: j for j, w in enumerate(corpus.vocabulary)}
    return np.array([index.get(w, -1) for w in words], dtype=np.int64)


def document_indicators(corpus, design: CoherenceDesign) -> sp.csr_matrix:
    """(n_docs, D) 0/1 matrix: 1, the word indicators and the pair indicators of every document (private)."""
    cols = _columns(corpus, design.words)
    X = sp.csr_matrix(corpus.X)
    n_docs, U = X.shape[0], len(design.words)
    present = np.flatnonzero(cols >= 0)
    M = sp.csr_matrix((np.ones(present.size), (cols[present], present)), shape=(X.shape[1], U))
    Xb = X.copy()
    Xb.data = np.ones_like(Xb.data, dtype=np.float64)
    B = sp.csc_matrix(Xb @ M)
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    Q = sp.csc_matrix(B[:, a].multiply(B[:, b])) if design.pairs.size else sp.csc_matrix((n_docs, 0))
    ones = sp.csc_matrix(np.ones((n_docs, 1)))
    return sp.hstack([ones, B, Q], format="csr")


def unit_contributions(corpus, design: CoherenceDesign, unit: str) -> sp.csr_matrix:
    """(n_units, D) matrix whose row u is x_u (module docstring): a document's indicators, or their sum over a
    user's documents (private)."""
    unit = check_option(unit, "unit", UNITS)
    V = document_indicators(corpus, design)
    if unit == "document":
        return V
    n_users = corpus.n_users
    G = sp.csr_matrix((np.ones(corpus.n_docs), (corpus.doc_users, np.arange(corpus.n_docs))),
                      shape=(n_users, corpus.n_docs))
    return sp.csr_matrix(G @ V)


def clip_weights(contributions: sp.csr_matrix, clip: float) -> np.ndarray:
    """``w_u = min(1, clip / ||x_u||_2)`` of every row."""
    norms = np.sqrt(np.asarray(contributions.multiply(contributions).sum(axis=1)).ravel())
    with np.errstate(divide="ignore"):
        return np.minimum(1.0, np.where(norms > 0, clip / np.maximum(norms, 1e-300), 1.0))


def clipped_sum(contributions: sp.csr_matrix, clip: float) -> tuple[np.ndarray, np.ndarray]:
    """``(sum_u w_u x_u, w)``: the statistic before noise (private) and the clipping weights (private)."""
    w = clip_weights(contributions, clip)
    return np.asarray(contributions.T @ w, dtype=float).ravel(), w


def sensitivity(design: CoherenceDesign, clip: float, unit: str, neighbours: str) -> float:
    """L2 sensitivity of the clipped sum (module docstring: derivation)."""
    check_option(unit, "unit", UNITS)
    check_option(neighbours, "neighbours", NEIGHBOURS)
    clip = check_real(clip, "clip", low=0.0)
    base = clip if neighbours == "add-remove" else math.sqrt(2.0) * clip
    if unit == "document":
        return min(base, design.worst_case_norm())
    return base


# -- the estimator (post-processing) ---------------------------------------------------------------------


def pair_npmi(S: np.ndarray, design: CoherenceDesign, floor: float = 0.0) -> np.ndarray:
    """Plug-in NPMI of every design pair from sums ``S`` of shape (..., D) (:func:`npmi_from_counts`), counts
    clipped to ``[floor, N]`` and a pair's to at most its words' (exact for noiseless sums at ``floor=0``; the
    estimator proper is :func:`eb_posterior`)."""
    from .readability import npmi_from_counts

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
    """:func:`topic_summary` of the plug-in pair NPMIs of sums ``S`` (..., D) (exact when ``S`` is noiseless)."""
    return topic_summary(pair_npmi(S, design, floor), design)


# -- empirical Bayes over the pairs (post-processing) -------------------------------------------------------

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
    U = len(design.words)
    N = max(float(S[0]), 1.0)
    return N, np.clip(S[1:1 + U], 1.0, N)


def _npmi_of_counts(c: np.ndarray, N: float, cw: np.ndarray, design: CoherenceDesign) -> np.ndarray:
    """NPMI of every pair (first axis) for pair counts ``c`` (P, ...) capped at ``min(df_a, df_b)``."""
    from .readability import npmi_from_counts

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
    """Log-weights of the nonparametric maximum-likelihood prior on the grid (Kiefer & Wolfowitz 1956), by EM
    (Laird 1978, "Nonparametric maximum likelihood estimation of a mixing distribution", JASA, Sec. 3)."""
    L = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    g = np.full(L.shape[1], 1.0 / L.shape[1])
    for _ in range(n_iter):
        g = g * (L.T @ (1.0 / np.maximum(L @ g, 1e-300))) / L.shape[0]
    return np.log(np.maximum(g, 1e-300))


@dataclass(frozen=True)
class PairPosterior:
    """Every pair's estimate: ``plugin`` pairs (count above ``PLUGIN_SIGMAS`` sigma) keep their noisy count, the
    others have posterior weights ``W`` over grid counts ``c`` (rows of the other pairs are unused); ``values``
    each pair's NPMI estimate, ``group`` the group whose prior it took (-1: none)."""

    plugin: np.ndarray
    W: np.ndarray
    c: np.ndarray
    values: np.ndarray
    N: float
    cw: np.ndarray
    group: np.ndarray


def eb_posterior(S: np.ndarray, design: CoherenceDesign, sigma: float, n_bins: int = 4) -> PairPosterior:
    """Each pair's NPMI estimate (module docstring, "The estimator").

    g-modelling empirical Bayes (Efron 2016, "Empirical Bayes deconvolution estimates", Biometrika): the pair
    counts of a group are ``df_ab = c(t) = m_ab e^t``, t drawn from a prior g of the group, observed as
    ``S_ab ~ N(c(t), sigma^2)``; g is the NPMLE (:func:`_npmle`, fitted on every pair of the group) and a pair's
    NPMI is its posterior mean ``sum_t g(t) phi((S_ab - c(t)) / sigma) NPMI(c(t))`` normalised. Groups
    (:func:`_groups`): within or across pairs, and bins of m. Pairs above ``PLUGIN_SIGMAS`` sigma take the plug-in.
    """
    S = np.asarray(S, dtype=float)
    N, cw = _word_terms(S, design)
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    logm = np.log(cw[a]) + np.log(cw[b]) - math.log(N)
    obs = S[1 + len(design.words):]
    c = np.exp(logm[:, None] + T_GRID[None, :])
    loglik = -0.5 * ((obs[:, None] - np.minimum(c, np.minimum(cw[a], cw[b])[:, None])) / sigma) ** 2
    L = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    plugin = obs > PLUGIN_SIGMAS * sigma
    group = np.full(obs.size, -1)
    W = np.zeros_like(L)
    for g, mask in enumerate(_groups(design, logm, n_bins)):
        group[mask] = g
        w = np.exp(_npmle(loglik[mask]))[None, :] * L[mask]
        W[mask] = w / np.maximum(w.sum(axis=1, keepdims=True), 1e-300)
    grid_values = _npmi_of_counts(c, N, cw, design)
    values = np.where(plugin, _npmi_of_counts(obs, N, cw, design), (W * grid_values).sum(axis=1))
    return PairPosterior(plugin=plugin, W=W, c=c, values=values, N=N, cw=cw, group=group)


def exact_values(corpus, design: CoherenceDesign, unit: str = "document", clip: float | None = None) -> dict:
    """The exact values the private evaluation estimates (private: the owner's diagnostics and the benchmarks).

    With ``clip=None``: each topic's NPMI (``npmi``, K) and contrast against *every* across pair (``contrast``, K),
    ``mean_npmi`` and ``mean_contrast`` (the pooled across mean), computed by the held-out measure itself
    (:func:`topicdp.metrics.readability.heldout_npmi` and :func:`~topicdp.metrics.readability.npmi_contrast`,
    one pair function :func:`~topicdp.metrics.readability.npmi_from_counts`) on the document indicators of the
    design's words: N counts every document of ``corpus``, a pair that never co-occurs scores -1. With ``clip``:
    the value on the clipped corpus at ``unit`` (what the noisy sum is a sum of; the sampled across pairs).
    """
    from .readability import _contrast_from, _pair_sums

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


# -- the release ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrivateEvaluation:
    """The private coherence of a release's topics: a DP output with its own small report.

    Attributes
    ----------
    npmi, contrast : ndarray (K,)
        Each topic's NPMI and NPMI contrast (empirical-Bayes estimates, not bias-corrected; contrast NaN without
        across pairs).
    npmi_interval, contrast_interval : ndarray (K, 2)
        Lower and upper ends of each topic's interval at ``level``.
    mean_npmi, mean_contrast : float
        Means over topics.
    mean_npmi_interval, mean_contrast_interval : (float, float)
    level : float
        Nominal coverage of the intervals (module docstring, "The interval").
    sd_mean_npmi : float
        Half the mean NPMI's interval width over z (from sigma and the noisy sums: post-processing).
    report : dict
        guarantee, epsilon, delta, unit, neighbours, sensitivity (and its derivation), sigma and what it is the
        standard deviation of, clip, the design's sizes, the estimator, the seed status. JSON-serialisable.
    interval_refused : str or None
        Why the intervals (then NaN) are not given (:func:`interval_refusal`), from public facts.
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
        """JSON-serialisable published form (every value is DP or post-processing; the report says which)."""
        def arr(x):
            return [None if not np.isfinite(v) else float(v) for v in np.ravel(x)]
        return {
            "format": "topicdp.evaluation/1",
            "topics": [{"top_words": list(t), "npmi": float(self.npmi[k]),
                        "npmi_interval": arr(self.npmi_interval[k]),
                        "contrast": None if not np.isfinite(self.contrast[k]) else float(self.contrast[k]),
                        "contrast_interval": arr(self.contrast_interval[k])}
                       for k, t in enumerate(self.top_words)],
            "mean_npmi": float(self.mean_npmi), "mean_npmi_interval": arr(self.mean_npmi_interval),
            "mean_contrast": None if not np.isfinite(self.mean_contrast) else float(self.mean_contrast),
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
    """The default clipping norm: one worst-case document, ``sqrt(1 + U + P)`` (no document is ever clipped; a
    user counts at most as much as one document holding every top word)."""
    return design.worst_case_norm()


def calibrate(design: CoherenceDesign, epsilon: float, delta: float, unit: str, neighbours: str,
              clip: float | None = None) -> tuple[float, float, float]:
    """``(sigma, sensitivity, clip)`` of the evaluation at (epsilon, delta): the analytic Gaussian mechanism."""
    from ..rdp import calibrate_gaussian

    clip = default_clip(design) if clip is None else check_real(clip, "clip", low=0.0)
    D = sensitivity(design, clip, unit, neighbours)
    return calibrate_gaussian(epsilon, delta, D, method="analytic"), D, clip


def planned_entry(design: CoherenceDesign, epsilon: float, delta: float, unit: str, neighbours: str,
                  clip: float | None = None):
    """The ledger entry of the evaluation, from public facts only (the lists, the budget, the unit): what a
    persisted ledger is checked against before the corpus is read."""
    from ..rdp.ledger import GaussianEntry

    sigma, D, _ = calibrate(design, epsilon, delta, unit, neighbours, clip)
    return GaussianEntry("private evaluation (NPMI, contrast)", sigma, D, unit=unit, neighbours=neighbours)


def point_estimate(noisy: np.ndarray, design: CoherenceDesign, sigma: float, n_bins: int = 4) -> dict:
    """The estimates (:func:`eb_posterior`), summarised per topic and over topics (:func:`topic_summary`)."""
    return topic_summary(eb_posterior(np.asarray(noisy, dtype=float), design, sigma, n_bins).values, design)


def estimate(noisy: np.ndarray, design: CoherenceDesign, sigma: float, *, level: float = 0.9, n_boot: int = 50,
             n_bins: int = 4, random_state=None) -> dict:
    """Estimates and intervals from noisy sums (post-processing; module docstring, "The interval").

    The point estimate is :func:`point_estimate` (empirical Bayes), moved into its interval where the shrinkage
    put it outside. Each interval (:func:`bound_intervals`) is a plug-in with a delta-method normal term for the
    pairs the noise resolves and a range for the others, so the estimator's bias cannot leave it; ``n_boot`` and
    ``random_state`` are accepted for the callers of the former bootstrap interval and unused.

    Returns a dict with ``npmi``, ``contrast`` (K,), their intervals (K, 2), ``mean_npmi``, ``mean_contrast`` and
    theirs, ``sd_mean_npmi`` (half the mean NPMI's interval width over z: a scale for callers that compare
    evaluations) and ``resolved`` (the share of design pairs read by the plug-in).
    """
    level = check_real(level, "level", low=0.0, high=1.0)
    check_int(n_boot, "n_boot", low=10)
    noisy = np.asarray(noisy, dtype=float)
    values = eb_posterior(noisy, design, sigma, n_bins).values
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

    NPMI ``f = h_s / h_ab - 1`` rises with the pair count c, falls with each word count, and rises with N
    (``df/d log N = log(df_a df_b / c^2) / h_ab^2 >= 0`` as c <= df_a, df_b), also along the constraints
    c <= df_a, df_b <= N; so the range's ends are at the box's corners: fewest pairs, most words, fewest documents
    (``lo``; c may be 0 when the box holds 0: -1) and the reverse (``hi``; the words at least c). Where the box
    lets the pair be in every document (c = N, NPMI's 0 / 0, 1 by convention and -1 next to it), ``lo`` is -1.
    Checked by brute force in the tests."""
    from .readability import npmi_from_counts

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
    """Plug-in NPMI of every pair and its gradient (P, 4) in (N, df_a, df_b, df_ab): with ``h_s = h_a + h_b``,
    ``df/dc = h_s / (h_ab^2 c)``, ``df/ddf_a = -1 / (h_ab df_a)``, ``df/dN = (2 h_ab - h_s) / (h_ab^2 N)``."""
    U = len(design.words)
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    N = max(float(noisy[0]), 1.0)
    w = np.clip(noisy[1:1 + U], 1.0, N)
    c = np.clip(noisy[1 + U:], 1.0, np.minimum(w[a], w[b]))
    hs, hp = np.log(N / w[a]) + np.log(N / w[b]), np.maximum(np.log(N / c), 1e-9)
    grad = np.stack([(2 * hp - hs) / (hp ** 2 * N), -1.0 / (hp * w[a]), -1.0 / (hp * w[b]), hs / (hp ** 2 * c)], 1)
    return np.clip(hs / hp - 1.0, -1.0, 1.0), grad


def _quantity_weights(design: CoherenceDesign) -> tuple[list, np.ndarray]:
    """(names, W (Q, P)): each reported quantity as a weighted sum of pair NPMIs (within: +1/n; across: -1/m)."""
    K, P = design.n_topics, design.pairs.shape[0]
    within, across = np.zeros((K, P)), np.zeros((K, P))
    for k in range(K):
        np.add.at(within[k], design.within[k], 1.0 / design.within[k].size)
        if design.across[k].size:
            np.add.at(across[k], design.across[k], 1.0 / design.across[k].size)
    W = np.vstack([within, within - across, within.mean(0, keepdims=True), (within - across).mean(0, keepdims=True)])
    return ["npmi"] * K + ["contrast"] * K + ["mean_npmi", "mean_contrast"], W


def bound_intervals(noisy: np.ndarray, design: CoherenceDesign, sigma: float, level: float = 0.9,
                    values: np.ndarray | None = None) -> dict:
    """Intervals at ``level`` for each topic's NPMI and contrast and their means, whatever the estimator's bias
    (module docstring, "The interval"): ``{"npmi": (lo, hi) (K,), "contrast": ..., "mean_npmi": (lo, hi),
    "mean_contrast": ..., "resolved": (P,) bool}``.

    A pair is *resolved* when its count, its words' and N are all above ``PLUGIN_SIGMAS`` sigma. A quantity
    ``Q = sum_i w_i NPMI_i`` splits into its resolved pairs, read by the plug-in with the delta method's normal
    term (the gradient over every coordinate the pairs share: N and the word counts), and the others, each bounded
    by its NPMI's range over the counts within ``z_B`` sigma of the noisy ones (:func:`_pair_ranges`), ``z_B`` the
    Bonferroni quantile over the m coordinates they read. alpha = 1 - level is split in halves between the two
    (all of it to the normal term when every pair is resolved), so each interval holds its value with probability
    at least ``level`` up to the normal approximation of the resolved part (union bound; not simultaneously).
    The contrast's sampled across mean adds its sampling variance (:func:`_across_sampling_variance` of the pair
    estimates ``values``, default the plug-in's).
    """
    alpha = 1.0 - level
    U = len(design.words)
    a, b = design.pairs[:, 0], design.pairs[:, 1]
    noisy = np.asarray(noisy, dtype=float)
    k = PLUGIN_SIGMAS * sigma
    res = (noisy[1 + U:] > k) & (noisy[1 + a] > k) & (noisy[1 + b] > k) & (noisy[0] > k)
    names, W = _quantity_weights(design)
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
    out: dict = {"resolved": res}
    K = design.n_topics
    for name, sl in (("npmi", slice(0, K)), ("contrast", slice(K, 2 * K))):
        out[name] = (lower[sl], upper[sl])
    out["mean_npmi"] = (float(lower[2 * K]), float(upper[2 * K]))
    out["mean_contrast"] = (float(lower[2 * K + 1]), float(upper[2 * K + 1]))
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
        Public top lists (a release's ``top_words``).
    corpus : topicdp.Corpus
        The owner's private corpus; its words are matched to the lists by spelling (a top word absent from its
        vocabulary never occurs).
    epsilon : float > 0
    delta : float in (0, 1)
    unit : {"document", "user"}, default "document"
    neighbours : {"add-remove", "replace-one"}, default "add-remove"
    clip : float > 0, optional
        Per-unit L2 clipping norm C; default :func:`default_clip`.
    n_across : int >= 0, optional
        Across pairs per topic for the contrast (:func:`coherence_design`).
    design_seed : int >= 0, default 0
        Public seed of the across-pair draw.
    level : float in (0, 1), default 0.9
        Nominal coverage of the intervals.
    n_boot : int >= 10, default 50
        Unused (the former bootstrap interval's replicates; kept so that callers' options still apply).
    ledger : topicdp.rdp.PrivacyLedger, optional
        Checked before the corpus is read and charged before the noise is drawn (one Gaussian entry).
    random_state : None, int or Generator
        Seeds the noise (testing only: the report marks the evaluation seeded).

    Returns
    -------
    PrivateEvaluation
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    check_option(unit, "unit", UNITS)
    check_option(neighbours, "neighbours", NEIGHBOURS)
    design = coherence_design(top_words, n_across=n_across, seed=design_seed)
    sigma, D, clip = calibrate(design, epsilon, delta, unit, neighbours, clip)
    entries = [planned_entry(design, epsilon, delta, unit, neighbours, clip)]
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


def interval_refusal(design: CoherenceDesign, unit: str, clip: float, mean_interval=None,
                     max_half_width: float = MAX_HALF_WIDTH) -> str | None:
    """Why no interval is given for the exact values (None: they are), from public facts and the DP output.

    The interval bounds the value on the clipped corpus; it is the exact value only when no unit can be clipped,
    i.e. ``clip`` at least the largest norm a unit can have. A document's is ``sqrt(1 + U + P)``; a user's has no
    public bound (any number of documents), so at the user level clipping moves the estimand by an amount nothing
    public bounds, and the interval is refused rather than printed. At the document level, ``mean_interval`` (the
    mean NPMI's, post-processing of the noisy sums) wider than ``2 max_half_width`` means too few units for the
    noise: the scores are undetermined, and saying so is better than printing them as if ranked."""
    if unit == "document" and mean_interval is not None and clip >= design.worst_case_norm() * (1.0 - 1e-12):
        half = (float(mean_interval[1]) - float(mean_interval[0])) / 2.0
        if half > max_half_width:
            return (f"too few units for the noise: the mean NPMI's interval spans +-{half:.2f} (over "
                    f"{max_half_width:g}): the exact values are undetermined at this epsilon; spend more, or "
                    "evaluate on more documents")
    if unit == "user":
        return ("user level: clipping each user's counts at C moves the value by an amount no public fact bounds "
                "(a user may hold any number of documents), so no interval for the exact NPMI is given")
    if clip < design.worst_case_norm() * (1.0 - 1e-12):
        return (f"clip {clip:.4g} below a document's largest norm {design.worst_case_norm():.4g}: clipped documents "
                "move the value by an amount no public fact bounds, so no interval for the exact NPMI is given")
    return None


# -- prediction from public facts -------------------------------------------------------------------------


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
    """The clipped statistic of a *public* corpus per unit (per document, or per user): ``S / n_units``.

    ``clip=math.inf`` gives the unclipped rates (the exact values' target, for :func:`predict_error`'s
    ``target_rates``)."""
    clip = default_clip(design) if clip is None else clip
    x = unit_contributions(reference, design, unit)
    return clipped_sum(x, clip)[0] / max(x.shape[0], 1)


def predict_error(design: CoherenceDesign, rates: np.ndarray, n_units: float, *, epsilon: float, delta: float,
                  unit: str = "document", neighbours: str = "add-remove", clip: float | None = None,
                  target_rates: np.ndarray | None = None, probability: float = 0.9, n_sim: int = 100,
                  seed: int = 0) -> ErrorForecast:
    """Expected error of the private mean NPMI at (epsilon, delta), before spending (module docstring).

    Parameters
    ----------
    rates : ndarray (D,)
        :func:`reference_rates` of a public corpus of the same kind (or a stated guess), at the same ``clip``.
    n_units : float > 0
        The stated (or DP-estimated) number of units (documents, or users): the sums are simulated as
        ``rates * n_units``.
    target_rates : ndarray (D,), optional
        The unclipped rates (``reference_rates(..., clip=math.inf)``): the error is then measured against the
        unclipped value, so the forecast includes what clipping moves (the user level); default ``rates``.
    probability : float in (0, 1), default 0.9
        The quantile of ``|error|`` reported.
    n_sim : int >= 10, default 100
        Simulated noise draws (public randomness: ``seed``).

    The forecast also says whether the intervals would be refused (``refused``: :func:`interval_refusal` of the
    median simulated half-width ``half_width``, and at the user level always), so a caller can decline to spend on
    an evaluation whose scores will be undetermined.
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


def predict_epsilon(design: CoherenceDesign, rates: np.ndarray, n_units: float, *, delta: float,
                    tolerance: float = 0.02, probability: float = 0.9, grid: Sequence[float] | None = None,
                    **kwargs) -> float:
    """The smallest epsilon of ``grid`` (default 0.05 to 10, 12 steps per factor 10) whose :func:`predict_error`
    quantile is at most ``tolerance`` (inf when none is); bisection over the grid, assuming the error falls with
    epsilon."""
    tolerance = check_real(tolerance, "tolerance", low=0.0)
    eps = np.asarray(grid if grid is not None else 10.0 ** np.arange(math.log10(0.05), 1.0 + 1e-9, 1.0 / 12))

    def ok(i: int) -> bool:
        return predict_error(design, rates, n_units, epsilon=float(eps[i]), delta=delta, probability=probability,
                             **kwargs).quantile <= tolerance

    lo, hi = -1, len(eps) - 1
    if not ok(hi):
        return math.inf
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return float(eps[hi])


def lists_seed(top_words: Sequence[Sequence[str]]) -> int:
    """A public seed derived from the lists themselves (for callers that want the draw tied to the release)."""
    h = hashlib.sha256("\n".join(" ".join(t) for t in top_words).encode()).digest()
    return int.from_bytes(h[:4], "little")
