"""Forecast the readability of a noisy release from public quantities, before anything private is touched.

Inputs: the per-entry noise ``sigma`` a mechanism adds to the topic-word probabilities and a public or assumed
*signal* (:func:`dirichlet_signal`, or a Zipf profile). For a row w with noisy values Y_j = w_j + sigma Z_j the
noisy n-th largest value sits near the level t where the expected count above it is n (normal approximation):

    sum_j Phi((w_j - t) / sigma) = n,     P(i in noisy top n) ~ Phi((w_i - t) / sigma),

and the expected top-n overlap is the mean of the latter over the top n and the topics (for any post-processing
that keeps each row's ranking). Every forecast is stated as the expected top-10 overlap with a non-private LDA
(:attr:`ReadabilityForecast.overlap_with_lda`: the closed form times :data:`LDA_AGREEMENT` or
:data:`RANDOM_START_AGREEMENT`). A release keeps about q n of its noiseless top words, so its NPMI and NPMI contrast
ratios are about q^2; on a DP vocabulary that passes only common words the contrast is q^2 times the ceiling of
topics made of those words (:func:`contrast_ceiling`, measured, not derived). Verdicts: ``noise`` below
:data:`NOISE_VS_LDA`, ``common words`` below the unit's contrast target, ``marginal`` below its overlap target
(:data:`TARGETS`), else ``readable`` (the only one released unasked). dp-vem's closed form
(:func:`forecast_from_sigma`) and its simulation on a public reference (:func:`forecast_on_reference`) are here too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import ndtr

from ._names import neighbour_factor
from ._validation import check_int, check_option, check_random_state, check_real
from .metrics.yardstick import TARGETS, Targets  # noqa: F401  (the targets are a metrics concept)

if TYPE_CHECKING:
    from .variational import DPVariationalEM

#: One scale for every forecast: the expected top-10 overlap of the release with a *non-private LDA* of the
#: same text. Readable from 0.25 (the document-level target), noise below 0.15 (the user-level one); the
#: simulation on a public reference (:func:`forecast_on_reference`) reads it directly.
READABLE_VS_LDA, NOISE_VS_LDA = 0.25, 0.15
#: How far two non-private LDA fits of the same text agree (top-10 overlap of two seeds). The closed form
#: forecasts the overlap with the topics it assumes; a non-private LDA recovers those only this far, so the
#: closed form's overlap times this factor is its forecast on the one scale.
LDA_AGREEMENT = 0.5
#: How far dp-vem from a random start agrees with a non-private LDA without any noise: its over-complete
#: warm-up finds a decomposition of its own (one topic of function words, the others themes); forecasts of that
#: road use it in place of :data:`LDA_AGREEMENT`. On text with well-separated topics both fits find the same
#: topics, and there the forecast is pessimistic.
RANDOM_START_AGREEMENT = 0.3


#: the ordinary vocabulary size the ceiling is stated against; another size V is read at the same share V' / V
CEILING_VOCABULARY = 2000
#: The NPMI contrast that noiseless topics made only of the V' words a user-level DP vocabulary passes first (the
#: largest weighted set-union totals) reach, over the contrast of the owner's LDA on an ordinary vocabulary of
#: :data:`CEILING_VOCABULARY` words, both on held-out users: (V', ratio) points measured on blog text at K = 10 and
#: made nondecreasing by pooling adjacent violators. ``"lda"``: a non-private LDA on those words (what any road's
#: topics can show there); ``"vem"``: dp-vem's own algorithm from a random start without its noise
#: (:class:`topicdp.variational.VariationalLDA`). Measured, not derived (module docstring).
CONTRAST_CEILING = {
    "lda": ((15, 0.015), (30, 0.065), (60, 0.168), (120, 0.286), (250, 0.409), (500, 0.512), (1000, 0.686)),
    "vem": ((15, 0.013), (30, 0.046), (60, 0.177), (120, 0.256), (250, 0.266), (500, 0.600), (1000, 0.685),
            (2000, 0.685)),
}


def contrast_ceiling(n_words: int, fit: str = "lda") -> float:
    """The contrast ratio that noiseless topics of kind ``fit`` on a DP vocabulary's ``n_words`` most-held words
    reach against an ordinary vocabulary of :data:`CEILING_VOCABULARY` words (:data:`CONTRAST_CEILING`, linear in log
    V' between its points, constant beyond its ends, at most 1); :func:`forecast_readability` reads another
    vocabulary size at the same share.

    A release's contrast is about q^2 times this (q its noise's top-word overlap). Calibrated on blog text at K = 10:
    a corpus whose most common words carry more (or fewer) of its themes than blogs' reaches more (or less), which
    only a public reference of that corpus tells (:func:`forecast_on_reference` reads one)."""
    check_int(n_words, "n_words", low=1)
    points = CONTRAST_CEILING[check_option(fit, "fit", tuple(CONTRAST_CEILING))]
    words, ratios = zip(*points)
    return float(min(1.0, np.interp(np.log(n_words), np.log(words), ratios)))


def on_lda_scale(overlap: float, method: str = "formula", agreement: float = LDA_AGREEMENT) -> float:
    """An expected overlap of ``method`` as the expected overlap with a non-private LDA (the one scale): the
    closed form's (or its simulation's) times ``agreement``, a simulation on a public reference's as it is."""
    return overlap if method == "public-simulation" else overlap * agreement


def verdict_for(overlap: float, method: str = "formula", agreement: float = LDA_AGREEMENT, *,
                unit: str | None = None, contrast: float | None = None) -> str:
    """``readable``, ``marginal``, ``common words`` or ``noise`` for an expected overlap of the given forecast method
    and, with a ``unit``, a forecast contrast ratio, judged on that unit's :data:`TARGETS` (module docstring)."""
    value = on_lda_scale(overlap, method, agreement)
    if value < NOISE_VS_LDA:
        return "noise"
    if unit is not None and contrast is not None and contrast < TARGETS[unit].contrast:
        return "common words"
    readable = READABLE_VS_LDA if unit is None else TARGETS[unit].overlap
    return "readable" if value >= readable else "marginal"


#: verdicts from the worst to the best: a tie between draws' verdicts goes to the worse
VERDICTS = ("noise", "common words", "marginal", "readable")


def verdict_of_draws(verdicts) -> str:
    """The verdict on several simulated releases (one :func:`verdict_for` each): ``readable`` when more than half of
    them are, since the targets ask that most releases meet them; otherwise what most of the other draws are (a tie
    goes to the worse verdict). The medians of each score separately can all meet the targets while fewer than half
    of the draws meet them together."""
    verdicts = list(verdicts)
    if not verdicts:
        raise ValueError("verdicts must not be empty")
    if 2 * verdicts.count("readable") > len(verdicts):
        return "readable"
    rest = [v for v in verdicts if v != "readable"]
    return max(VERDICTS[:-1], key=lambda v: (rest.count(v), -VERDICTS.index(v)))


@dataclass(frozen=True)
class ReadabilityForecast:
    """What :func:`forecast_readability` predicts; ``lines()`` gives the plain-language summary."""

    sigma: float
    n_topics: int
    n_words: int
    top_n: int
    noise_to_signal: float
    expected_overlap: float
    per_topic_overlap: tuple
    verdict: str
    sigma_readable: float
    advice: str
    method: str = "formula"
    matched_overlap: float | None = None
    standard_error: float | None = None
    agreement: float = LDA_AGREEMENT
    unit: str | None = None
    npmi: float | None = None
    contrast: float | None = None
    diversity: float | None = None
    vocabulary_share: float = 1.0
    contrast_ceiling: float = 1.0  # the factor the vocabulary's restriction put on the contrast forecast
    contrast_range: tuple | None = None
    draw_verdicts: tuple | None = None

    @property
    def draws_on_the_edge(self) -> bool:
        """Whether the simulated draws' count of readable ones is on the edge (:func:`on_the_edge`); False without
        simulated draws."""
        return self.draw_verdicts is not None and on_the_edge(self.draw_verdicts.count("readable"),
                                                              len(self.draw_verdicts))

    @property
    def refuses(self) -> bool:
        """Whether the release misses the targets (any verdict but ``readable``): refused unless the owner insists."""
        return self.verdict != "readable"

    def as_dict(self) -> dict:
        d = asdict(self)
        d["per_topic_overlap"] = list(self.per_topic_overlap)
        return d

    @property
    def overlap_with_lda(self) -> float:
        """The forecast on the one scale of every forecast: expected top-n overlap with a non-private LDA."""
        return on_lda_scale(self.expected_overlap, self.method, self.agreement)

    def lines(self) -> list[str]:
        if self.method == "public-simulation":
            how = "simulated on the public reference"
        else:
            how = (f"the closed form's {self.expected_overlap:.2f} with its assumed topics x {self.agreement:g}, how "
                   + ("far two non-private LDA fits agree" if self.agreement == LDA_AGREEMENT else
                      "far this algorithm's noiseless topics agree with LDA's on real text"))
        readable = READABLE_VS_LDA if self.unit is None else TARGETS[self.unit].overlap
        out = [
            f"readability forecast: {self.verdict}",
            f"  per-entry noise sigma = {self.sigma:.3g}, {self.noise_to_signal:.3g} x the {self.top_n}th-largest "
            f"topic-word probability (median over {self.n_topics} topics, V = {self.n_words})",
            f"  expected top-{self.top_n} overlap with a non-private LDA: {self.overlap_with_lda:.2f} ({how}; "
            f"readable from {readable:g}, noise below {NOISE_VS_LDA})",
        ]
        if self.contrast is not None and self.unit is not None:
            t = TARGETS[self.unit]
            if self.method == "public-simulation":
                basis = ("the simulated releases' median against the reference's non-private LDA, both on the "
                         "reference's text" + ("" if self.contrast_range is None else
                                               ", draws {:.2f}-{:.2f}x".format(*self.contrast_range)))
            else:
                basis = "q^2" + (f" x {self.contrast_ceiling:.2f}, the contrast topics of the DP vocabulary's "
                                 f"{self.n_words} common words reach without noise" if self.vocabulary_share < 1
                                 else "") + f", q = {self.expected_overlap:.2f}"
            out.append(f"  expected NPMI contrast {self.contrast:.2f}x a non-private LDA's ({basis}; target "
                       f"{t.contrast:g}x at the {self.unit} level: below it the lists are common words, not themes); "
                       f"NPMI {self.npmi:.2f}x (target {t.npmi:g}x)"
                       + ("" if self.diversity is None else f", diversity {self.diversity:.2f} (target {t.diversity:g})"))
        if self.draw_verdicts is not None:
            n, ok = len(self.draw_verdicts), self.draw_verdicts.count("readable")
            out.append(f"  readable in {ok} of {n} simulated releases (the verdict: readable when more than half are)"
                       + ("; on the edge: within one standard error of one half, about as many releases would miss "
                          "the targets as meet them" if self.draws_on_the_edge else ""))
        out.append(f"  {self.advice}")
        return out


def on_the_edge(passed: int, n: int) -> bool:
    """Whether ``passed`` of ``n`` draws is within one binomial standard error of one half (``|passed / n - 1/2| <=
    1 / (2 sqrt(n))``, squared to stay in integers): another ``n`` draws could as well have had most on the other side
    (3 to 6 of 9)."""
    return (2 * passed - n) ** 2 <= n


# -- signals ------------------------------------------------------------------------------------------


def dirichlet_signal(n_topics: int, n_words: int, beta: float, random_state=0) -> np.ndarray:
    """K rows ~ Dirichlet(beta 1_V): an assumed topic sparsity (small beta: a few words carry a topic)."""
    n_topics = check_int(n_topics, "n_topics", low=1)
    n_words = check_int(n_words, "n_words", low=2)
    beta = check_real(beta, "beta", low=0.0)
    return check_random_state(random_state).dirichlet(np.full(n_words, beta), size=n_topics)


# -- the formula --------------------------------------------------------------------------------------


def expected_topn_overlap(signal, sigma: float, top_n: int = 10, *, per_topic: bool = False):
    """Expected top-``top_n`` overlap of ``signal + N(0, sigma^2)`` with ``signal`` (a (K, V) array of any real
    scores), row by row (module docstring): its mean, or with ``per_topic`` each row's."""
    S = _check_signal(signal)
    sigma = check_real(sigma, "sigma", low=0.0, low_open=False)
    n = check_int(top_n, "top_n", low=1, high=S.shape[1] - 1)
    values = np.ones(S.shape[0]) if sigma == 0.0 else _overlap_by_row(S, sigma, n)  # sigma 0: ranks kept
    return values if per_topic else float(values.mean())


def _overlap_by_row(S: np.ndarray, sigma: float, n: int) -> np.ndarray:
    """Normal approximation of E|noisy top n ∩ top n| / n for each row (module docstring)."""
    t = _noisy_threshold(S, sigma, n)
    top = -np.sort(-S, axis=1)[:, :n]
    return ndtr((top - t[:, None]) / sigma).mean(axis=1)


def _noisy_threshold(S: np.ndarray, sigma: float, n: int) -> np.ndarray:
    """t_k solving g(t) = sum_j Phi((w_kj - t) / sigma) - n = 0 by row: g falls strictly across [min w - 10 sigma,
    max w + 10 sigma], so Newton steps from the n-th largest w, bisecting where they would leave the bracket."""
    lo = S.min(axis=1) - 10.0 * sigma
    hi = S.max(axis=1) + 10.0 * sigma
    t = -np.partition(-S, n - 1, axis=1)[:, n - 1]
    for _ in range(200):
        z = (S - t[:, None]) / sigma
        g = ndtr(z).sum(axis=1) - n
        lo, hi = np.where(g > 0, t, lo), np.where(g > 0, hi, t)
        slope = np.exp(-0.5 * z * z).sum(axis=1) / (sigma * np.sqrt(2.0 * np.pi))  # -g'(t)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # slope 0 far out: bisect
            newton = t + g / slope
        inside = np.isfinite(newton) & (newton >= lo) & (newton <= hi)
        step = np.where(inside, newton, (lo + hi) / 2)
        done = np.abs(step - t) <= 1e-12 * (sigma + np.abs(t))
        t = step
        if done.all():
            break
    return t


def _check_signal(signal) -> np.ndarray:
    S = np.asarray(signal, dtype=float)
    if S.ndim != 2 or S.shape[0] < 1 or S.shape[1] < 2 or not np.all(np.isfinite(S)):
        raise ValueError(f"signal must be a finite (K, V) topic-word matrix with V >= 2, got shape {S.shape}")
    return S


# -- the forecast -------------------------------------------------------------------------------------


def forecast_readability(sigma: float, signal, *, top_n: int = 10, method: str = "formula", n_draws: int = 200,
                         random_state=0, n_units: int | None = None, unit: str | None = None,
                         agreement: float = LDA_AGREEMENT, vocabulary_share: float = 1.0,
                         fit: str = "lda") -> ReadabilityForecast:
    """Forecast a release with per-entry noise ``sigma`` (topic-word probability units) on ``signal`` (a public or
    assumed (K, V) topic-word matrix): its noise-to-signal ratio, expected top-``top_n`` overlap and verdict.

    Parameters
    ----------
    method : {"formula", "monte_carlo"}, default="formula"
        The normal approximation (module docstring), or ``n_draws`` simulated releases seeded by ``random_state``
        (which also give the Hungarian-matched overlap and a standard error).
    n_units, unit : int, {"user", "document"}, optional
        Phrase the advice in units; with ``unit`` the forecast also gives the NPMI and contrast ratios and is judged
        on that unit's :data:`TARGETS` (without, on the overlap alone: :data:`READABLE_VS_LDA`).
    agreement : float in (0, 1], default=LDA_AGREEMENT
        How far the algorithm's noiseless topics agree with a non-private LDA's: the factor to the one scale.
    vocabulary_share : float in (0, 1], default=1
        V' / V: the release's vocabulary size over the owner's ordinary one. Below 1 (a DP vocabulary of common words
        only) the contrast forecast is q^2 times :func:`contrast_ceiling` at this share of
        :data:`CEILING_VOCABULARY` words (the calibration's ordinary vocabulary).
    fit : {"lda", "vem"}, default="lda"
        The noiseless fit whose ceiling is read: ``"vem"`` for dp-vem from a random start.

    Examples
    --------
    >>> from topicdp.forecast import dirichlet_signal, forecast_readability
    >>> signal = dirichlet_signal(3, 200, 0.15)  # an assumed topic sparsity (seeded)
    >>> forecast_readability(1e-4, signal).verdict, forecast_readability(1.0, signal).verdict
    ('readable', 'noise')
    """
    S = _check_signal(signal)
    sigma = check_real(sigma, "sigma", low=0.0, low_open=False)
    n = check_int(top_n, "top_n", low=1, high=S.shape[1] - 1)
    agreement = check_real(agreement, "agreement", low=0.0, high=1.0, high_open=False)
    if method not in ("formula", "monte_carlo"):
        raise ValueError(f"method must be 'formula' or 'monte_carlo', got {method!r}")
    nth = np.sort(S, axis=1)[:, -n]
    if np.any(nth <= 0):
        raise ValueError(f"every topic of signal needs {n} positive entries (top_n={n})")
    ratio = float(np.median(sigma / nth))
    matched = se = None
    if method == "formula":
        per = expected_topn_overlap(S, sigma, n, per_topic=True)
        overlap = float(per.mean())
    else:
        per, overlap, matched, se = _simulate(S, sigma, n, check_int(n_draws, "n_draws", low=2), random_state)
    share = check_real(vocabulary_share, "vocabulary_share", low=0.0, high=1.0, high_open=False)
    ceiling = 1.0 if share >= 1.0 else contrast_ceiling(max(1, round(share * CEILING_VOCABULARY)), fit)
    npmi = contrast = None
    if unit is not None:
        npmi = overlap ** 2
        contrast = ceiling * overlap ** 2
    verdict = verdict_for(overlap, method, agreement, unit=unit, contrast=contrast)
    readable = READABLE_VS_LDA if unit is None else TARGETS[unit].overlap
    sigma_readable = _sigma_for(S, n, readable / agreement, sigma)
    return ReadabilityForecast(
        sigma=sigma, n_topics=S.shape[0], n_words=S.shape[1], top_n=n, noise_to_signal=ratio,
        expected_overlap=overlap, per_topic_overlap=tuple(float(v) for v in per), verdict=verdict,
        sigma_readable=sigma_readable, advice=_advice(verdict, sigma, sigma_readable, n_units, unit,
                                                      vocabulary_share=share),
        method=method, matched_overlap=matched, standard_error=se, agreement=agreement, unit=unit, npmi=npmi,
        contrast=contrast, vocabulary_share=share, contrast_ceiling=ceiling,
    )


def _simulate(S, sigma, n, n_draws, random_state):
    from .metrics.readability import _top_ids, topic_overlap

    rng = check_random_state(random_state)
    true_top = _top_ids(S, n)
    aligned, matched = [], []
    for _ in range(n_draws):
        noisy = S + rng.normal(0.0, sigma, S.shape)
        top = _top_ids(noisy, n)
        aligned.append([np.intersect1d(a, b).size / n for a, b in zip(top, true_top)])
        matched.append(topic_overlap(noisy, S, top_n=n))
    aligned = np.asarray(aligned)
    means = aligned.mean(axis=1)
    se = float(means.std(ddof=1) / np.sqrt(n_draws))
    return aligned.mean(axis=0), float(means.mean()), float(np.mean(matched)), se


def _sigma_for(S: np.ndarray, n: int, target: float, sigma: float) -> float:
    """Largest sigma whose expected overlap is >= target (bisection in log sigma, 1% resolution); inf when even
    pure noise reaches it (its row-aligned overlap tends to n / V: a top 9 of 10 words always keeps 8)."""
    if n / S.shape[1] >= target:
        return float("inf")
    if sigma > 0 and expected_topn_overlap(S, sigma, n) >= target:
        lo, hi = sigma, sigma * 2.0
        while expected_topn_overlap(S, hi, n) >= target:
            lo, hi = hi, hi * 2.0
    else:
        hi = sigma if sigma > 0 else float(np.max(S))
        lo = hi / 2.0
        while expected_topn_overlap(S, lo, n) < target:
            if lo < 1e-12:
                return 0.0
            lo, hi = lo / 2.0, lo
    while hi / lo > 1.01:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if expected_topn_overlap(S, mid, n) >= target else (lo, mid)
    return float(lo)


def _advice(verdict: str, sigma: float, sigma_readable: float, n_units, unit, *, vocabulary_share: float = 1.0) -> str:
    if verdict == "common words":
        if vocabulary_share < 1.0:
            why = (f"the DP vocabulary keeps only the words most {unit or 'unit'}s use ({vocabulary_share:.0%} of the "
                   "words asked for), which every topic shares")
        else:
            why = "the noise blurs the words that tell the topics apart, and the words every topic shares stay on top"
        # a public word list helps where the words are a DP selection that kept a share of them, not where the
        # release already has all the words asked for (a public list, or a selection that kept them all)
        remedy = ("A public word list (vocabulary=VocabularyPolicy.public(words)) or document level gives themes"
                  if vocabulary_share < 1.0 else "Document level gives themes")
        return (f"The release would be lists of common words, not themes: {why}. {remedy}; so do more units or a "
                "larger epsilon.")
    if verdict == "readable":
        return (f"The noise leaves most top words in place (up to sigma = {sigma_readable:.3g} the forecast "
                "stays readable).")
    factor = sigma / sigma_readable if sigma_readable > 0 else float("inf")
    # the plan's count is stated or a DP estimate: say how many more, relative to it, not as a fact about the data
    units = "" if n_units is None else f" (about {factor:.3g}x the {n_units:,} the plan counts: {factor * n_units:,.0f})"
    who = unit or "privacy unit"
    head = ("The release would be noise: do not publish it as topics." if verdict == "noise"
            else "The release would be only partly readable.")
    if factor <= 1.0:  # only a simulation on a public reference gets here: the noise is not what limits it
        return (f"{head} The noise alone would leave the top words in place (sigma {sigma:.3g} <= "
                f"{sigma_readable:.3g}); what limits the overlap is the corpus: too few {who}s for the topics to "
                "agree with a non-private fit, or common words that every topic shares. More units, a smaller "
                "vocabulary or a stop-word list would help; a larger epsilon would not.")
    return (
        f"{head} The noise must shrink {factor:.3g}x (sigma <= {sigma_readable:.3g}) for a readable forecast. "
        f"What would help: more {who}s{units} for an estimator whose per-unit influence falls as 1/n; a larger "
        "epsilon (the Gaussian sigma falls roughly as 1/epsilon); "
        + ("" if unit == "document" else "document instead of user level (a user moves up to all of its documents); ")
        + "a smaller vocabulary (each top word's probability grows, and "
        "fewer words compete); or another mechanism (one with a smaller sensitivity, or one that releases "
        "only each topic's top words)."
    )


# -- dp-vem: the closed form from its sigma, and the simulation on a public reference --------------------------

#: Assumed weighted mass ||a_u||_1 / ||a_u||_2 of one unit, when no public reference gives it: for text about
#: 0.7 to 0.9 x sqrt(distinct words of the unit), so about 5 for a ~70-token post and 10 for a user of 20 posts.
DEFAULT_MASS_PER_UNIT = {"document": 5.0, "user": 10.0}


def mass_per_unit(corpus, unit: str) -> float:
    """Mean weighted mass ||a_u||_1 / ||a_u||_2 of a (public reference) corpus' units."""
    import scipy.sparse as sp

    from .variational import unit_weights

    X = sp.csr_matrix(corpus.X, dtype=np.float64)
    units = corpus.doc_users if unit == "user" else np.arange(X.shape[0])
    w = unit_weights(X, np.asarray(units))
    return float((np.asarray(X.sum(axis=1)).ravel() * w).sum() / (int(np.max(units)) + 1))


def forecast(model: "DPVariationalEM", n_units: int, n_words: int, *, mass_per_unit: float | None = None,
             signal=None, top_n: int = 10, public_start: bool | None = None, vocabulary_share: float = 1.0):
    """Forecast dp-vem's release (``model``'s public parameters) at ``n_units`` units and ``n_words`` words.

    The released topic k is lambda_k normalised; its mass is about M / K with M = n_units x ``mass_per_unit`` (from
    a public reference, :func:`mass_per_unit`, else :data:`DEFAULT_MASS_PER_UNIT`), so each release's noise is
    sigma K / M in probability units (the last release dominates: the E-step averages earlier noise out). The
    signal is a public topic-word matrix or Dirichlet(0.15) rows, a sparsity that matches LDA's noise tolerance on
    real text. ``public_start`` (default: whether ``model.init`` is set) picks the agreement factor.
    """
    public_start = model.init is not None if public_start is None else public_start
    return forecast_from_sigma(model.noise_scale(), model.n_topics, model.unit, n_units, n_words,
                               mass_per_unit=mass_per_unit, signal=signal, top_n=top_n, public_start=public_start,
                               vocabulary_share=vocabulary_share)


def forecast_from_sigma(sigma: float, n_topics: int, unit: str, n_units: int, n_words: int, *,
                        mass_per_unit: float | None = None, signal=None, top_n: int = 10, public_start: bool = False,
                        vocabulary_share: float = 1.0):
    """:func:`forecast` from the noise ``sigma`` of each release (:func:`topicdp.variational.noise_scale`), for a
    plan that has the planned releases but no estimator."""
    check_int(n_units, "n_units", low=1)
    check_int(n_words, "n_words", low=2)
    mass = DEFAULT_MASS_PER_UNIT[unit] if mass_per_unit is None else check_real(mass_per_unit, "mass_per_unit", low=0.0)
    sigma = sigma * n_topics / (n_units * mass)
    if signal is None:
        signal = dirichlet_signal(n_topics, n_words, 0.15)
    agreement = LDA_AGREEMENT if public_start else RANDOM_START_AGREEMENT
    return forecast_readability(sigma, signal, top_n=top_n, n_units=n_units, unit=unit, agreement=agreement,
                                vocabulary_share=vocabulary_share, fit="lda" if public_start else "vem")


#: the first word of the seed of the public simulation's noise (its draws are streams [this, draw]); a release's
#: seed is one integer (or OS entropy), so no release draws the simulation's noise
SIMULATION_STREAM = 0x51D0
#: fits of the non-private LDA (seeds 0, 1, ...) whose median NPMI and contrast the simulated releases are set
#: against: one LDA fit is itself random, and one seed's contrast would enter every forecast ratio
SIMULATION_LDA_SEEDS = 3
#: simulated releases the decision reads (``forecast_on_reference``'s ``n_draws``)
SIMULATION_DRAWS = 9


def forecast_on_reference(model: "DPVariationalEM", reference, n_units: int, *, n_draws: int = SIMULATION_DRAWS,
                          top_n: int = 10, vocabulary_share: float = 1.0, score_on=None):
    """Forecast ``model``'s release by running it ``n_draws`` times on a public ``reference`` corpus (on the private
    corpus' words) at the private signal-to-noise ratio: nothing is spent.

    The release sums n unit statistics (each of norm <= 1) and adds noise sigma; on n_sim units, noise
    ``sigma n_sim / n`` keeps that ratio (:func:`scaled_noise_model`). Each draw has a noise stream of its own
    (:data:`SIMULATION_STREAM`) and is compared by matched top-``top_n`` overlap with a non-private LDA of the same
    corpus; draws and LDA (the median over :data:`SIMULATION_LDA_SEEDS` fits) are scored on ``score_on`` (default
    the reference; the same words): NPMI, contrast (times ``vocabulary_share`` squared: the reference's LDA is on the
    same few words, not on an ordinary vocabulary; :func:`contrast_ceiling`, calibrated on blogs, is not used here
    because the reference's own text knows its words better) and
    diversity. With a public start (``model.init`` set) the start is refitted on one half of the reference's units
    and the run simulated on the other, so that the start never saw the data it runs on. Unlike :func:`forecast`
    this sees the corpus' own structure (the common words a noisy release still shows). Each draw is judged on
    ``model.unit``'s targets by its own overlap and contrast; the verdict is :func:`verdict_of_draws`'.

    Returns a :class:`ReadabilityForecast` with ``method="public-simulation"``: the median draw's overlap, the
    medians of the scores, and :func:`forecast`'s noise-to-signal ratio and ``sigma_readable`` (the LDA as signal).
    """
    from dataclasses import replace

    from sklearn.base import clone

    from .metrics.readability import _contrast, topic_diversity, topic_overlap
    from .rdp import PrivacyLedger
    from .topics import reference_lda

    check_int(n_units, "n_units", low=1)
    check_int(n_draws, "n_draws", low=1)
    K, unit = model.n_topics, model.unit
    corpus, init = reference, model.init
    if init is not None:
        start_half, corpus = _halves(reference, unit)
        init = public_init(start_half, K, unit=unit)
    simulated = scaled_noise_model(model, corpus.n_users if unit == "user" else corpus.n_docs, n_units)
    simulated.set_params(init=init)
    # the non-private LDA the simulated releases are set against (= make_model("gensim-lda", K, seed, passes=5)); its
    # NPMI and contrast are the medians over SIMULATION_LDA_SEEDS fits, as the owner's LDA is itself random
    ldas = [reference_lda(corpus, K, random_state=seed, passes=5) for seed in range(SIMULATION_LDA_SEEDS)]
    lda = ldas[0]
    # fits of the PUBLIC reference: a ledger of their own marks them accounted (no repeated-release warning); their
    # noise comes from streams of their own (SIMULATION_STREAM), never from a seed a release uses
    share = check_real(vocabulary_share, "vocabulary_share", low=0.0, high=1.0, high_open=False)
    text = reference if score_on is None else score_on
    if text is not reference and list(text.vocabulary) != list(reference.vocabulary):
        raise ValueError("score_on must be on the reference's words (the same vocabulary, in the same order)")
    bases = [_contrast(fit, text, None, top_n) for fit in ldas]
    base = {key: float(np.median([b[key] for b in bases])) for key in ("npmi", "contrast")}
    per_draw, npmi, contrast, diversity = [], [], [], []
    for draw in range(n_draws):
        W = (clone(simulated).set_params(random_state=np.random.default_rng([SIMULATION_STREAM, draw]))
             .fit(corpus, ledger=PrivacyLedger()).topic_word_)
        per_draw.append(topic_overlap(W, lda, top_n=top_n, per_topic=True))
        ours = _contrast(W, text, None, top_n)
        npmi.append(ours["npmi"] / base["npmi"] if base["npmi"] > 0 else float("nan"))
        contrast.append(share ** 2 * ours["contrast"] / base["contrast"] if base["contrast"] > 0 else float("nan"))
        diversity.append(topic_diversity(W, top_n=top_n))
    overall = [float(np.mean(p)) for p in per_draw]
    middle = int(np.argsort(overall)[len(overall) // 2])
    npmi_m, contrast_m = float(np.median(npmi)), float(np.median(contrast))
    # each draw judged on its own overlap and contrast together, as a release is (not the medians apart)
    verdicts = tuple(verdict_for(o, "public-simulation", unit=unit, contrast=c) for o, c in zip(overall, contrast))
    verdict = verdict_of_draws(verdicts)
    formula = forecast(model, n_units, reference.n_words, mass_per_unit=mass_per_unit(reference, unit), signal=lda,
                       top_n=top_n, vocabulary_share=share)
    return replace(formula, method="public-simulation", expected_overlap=overall[middle],
                   per_topic_overlap=tuple(float(v) for v in per_draw[middle]), verdict=verdict,
                   npmi=npmi_m, contrast=contrast_m, diversity=float(np.median(diversity)),
                   contrast_range=_range(contrast), draw_verdicts=verdicts, contrast_ceiling=share ** 2,
                   advice=_advice(verdict, formula.sigma, formula.sigma_readable, n_units, unit,
                                  vocabulary_share=share))


def _range(values) -> tuple | None:
    """(min, max) of the finite values, None without any (the LDA's own contrast was not positive)."""
    finite = [v for v in values if np.isfinite(v)]
    return (float(min(finite)), float(max(finite))) if finite else None


def scaled_noise_model(model: "DPVariationalEM", n_sim: int, n_units: int) -> "DPVariationalEM":
    """A copy of ``model`` whose noise is ``sigma n_sim / n_units``: on a corpus of n_sim units it has the
    signal-to-noise ratio ``model`` has on n_units. Its epsilon is the exact GDP inverse of that sigma
    (:func:`topicdp.rdp.gaussian.gdp_epsilon`), a simulation parameter, not a guarantee of anything."""
    from sklearn.base import clone

    from .rdp.gaussian import gaussian_mu, gdp_epsilon

    sigma = model.noise_scale() * n_sim / n_units
    mu = gaussian_mu(sigma, neighbour_factor(model.neighbours), model.n_iterations)
    return clone(model).set_params(epsilon=gdp_epsilon(mu, model.delta))


def _halves(corpus, unit: str):
    """Two halves of ``corpus``' units (a fixed, seeded split; the first gets the extra unit)."""
    n = corpus.n_users if unit == "user" else corpus.n_docs
    if n < 2:
        raise ValueError(f"the reference needs at least 2 {unit}s to split, got {n}")
    order = np.random.default_rng(0).permutation(n)
    take = corpus.subset_users if unit == "user" else corpus.subset_documents
    return take(np.sort(order[: (n + 1) // 2])), take(np.sort(order[(n + 1) // 2:]))


def public_init(reference, n_topics: int, *, unit: str = "user", n_iterations: int = 15, random_state=0) -> np.ndarray:
    """Starting topics (``init``) for :class:`topicdp.variational.DPVariationalEM` from a *public* reference corpus on
    the same words: a noiseless run of the same algorithm (:class:`~topicdp.variational.VariationalLDA`), public as
    its input is."""
    from .variational import VariationalLDA

    model = VariationalLDA(n_topics, unit=unit, n_iterations=n_iterations, random_state=random_state)
    return model.fit(reference).topic_word_
