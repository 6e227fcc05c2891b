"""Vocabularies a release may use: a public word list, or words selected under DP at the privacy unit.

A vocabulary built from the private texts discloses which words occur (a rare word used by one user reveals that
user). :func:`load_vocabulary` reads a public word list, which costs no privacy; :func:`select_vocabulary`
selects words by Gaussian thresholding of per-unit-bounded word counts.

The mechanism: each unit u (a user or a document) contributes its set ``S_u`` of at most ``k`` most frequent
distinct tokens (ties by code point; a function of u's own tokens), as ``c_u = |S_u|^{-1/2} 1_{S_u}``
(``||c_u|| = 1``); every candidate word of ``T_D = sum_u c_u`` gets ``T_D(w) + N(0, sigma^2)``, and the words
above ``tau`` are released (the ``max_features`` largest, post-processing). This is the weighted-Gaussian set
union of Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin 2020, "Differentially private set union" (ICML);
Desfontaines, Voss, Gipson & Mandayam 2022 (PoPETs) analyse the same structure.

Privacy statement. Let ``Delta = 1`` (add/remove) or ``sqrt(2)`` (replace-one), ``delta_G`` the exact Gaussian
profile at ``(sigma, Delta)`` (Balle & Wang 2018, Thm. 8), and
``delta_tau = max_{1 <= s <= k} 1 - Phi((tau - 1/sqrt(s)) / sigma)^s``. **Theorem.** The released words, even
with their noisy totals, are ``(eps, delta_G + delta_tau)``-DP at the unit.

*Proof.* Write ``D = D0 + u``, ``D' = D0 + u'`` (or ``D0``, ``c_{u'} = 0``); C the words in both supports, B and
B' those in one. (a) A word of B has ``T_D0(w) = 0``, so ``B ⊆ S_u``, ``|B| <= s = |S_u| <= k``, each of total
``1/sqrt(s)``: no word of B passes with probability ``q >= 1 - delta_tau`` (independent noises), likewise
``q'`` for B'; only one unit's words enter, so the union is over at most k words even for replace-one. (b) On C,
``||c_u - c_{u'}||^2 <= ||c_u||^2 + ||c_{u'}||^2 <= 2`` (non-negative vectors; 1 for add/remove), so the laws
``P~``, ``Q~`` of the output computed from C alone satisfy ``P~(O) - e^eps Q~(O) <= delta_G``. (c) ``P = q P~ +
(1 - q) P_bad`` and ``Q >= q' Q~``, so ``P(O) - e^eps Q(O) <= 1 - min(q, q')(1 - delta_G) <= delta_G +
delta_tau``. ∎ The bound is attained up to ``delta_G delta_tau`` by a unit whose words nobody else uses (the tests
check it by exact enumeration).

Calibration: all of epsilon goes to the noise; half of delta calibrates sigma (analytic), half the threshold,
``tau = max_s 1/sqrt(s) + sigma Phi^{-1}((1 - delta/2)^{1/s})`` (Gopi et al.), rounded upward until the evaluated
``delta_tau <= (1 - 1e-10) delta/2``. Composition: step (c) survives adaptive composition, so the selection is a
Gaussian ledger entry ``(sigma, Delta)`` plus an approx entry ``(0, delta_tau)``
(:meth:`DPVocabulary.add_to_ledger`). The number of units and of candidates and the noisy totals are not released.

Two rounds (``method="two-round"``). A word far above ``tau`` wastes the weight its units spend on it. Round 1 runs
the selection above with ``sigma_1 = sigma / sqrt(rho)`` (``rho`` = :data:`FIRST_ROUND_SHARE`) and ``tau_1`` for
``delta_tau / 2``; it releases ``O_1``, mostly words far above ``tau``. Round 2 runs it again with ``sigma_2 = sigma /
sqrt(1 - rho)`` and ``tau_2`` for ``delta_tau / 2`` on ``S'_u = S_u minus O_1``, so each unit spreads its unit norm
over its words still unreleased (``|S'_u|^{-1/2}`` each, more than ``|S_u|^{-1/2}``); the release is ``O_1 ∪ O_2``.
This is DP-SIPS (Swanberg, Desfontaines & Haney 2023, PoPETs) with two rounds and the Gaussian rounds' budgets
composed exactly. **Theorem.** It is ``(eps, delta_G + delta_tau)``-DP with the ``sigma`` and ``delta_tau`` above,
for either relation: the same ledger entries. *Proof.* Round 2's weights are a function of ``u``'s own set and of
``O_1``, a DP output, so given ``O_1`` steps (a) and (b) hold in each round with ``Delta`` and the round's
``(sigma_r, tau_r)``: a unit's own words in round ``r`` pass with probability at most ``delta_tau / 2`` whatever
came before, so ``P <= q P~ + (1 - q)`` and ``Q >= q Q~`` with ``q = (1 - delta_tau / 2)^2`` (bound the conditional
chance of round 2's good event below by ``1 - delta_tau / 2`` under each ``O_1``), where ``P~``, ``Q~`` are the laws
computed from the shared words alone: an adaptive composition of Gaussian mechanisms of sensitivity ``Delta``,
which is ``mu``-GDP with ``mu^2 = Delta^2 (sigma_1^{-2} + sigma_2^{-2}) = (Delta / sigma)^2`` exactly (Dong, Roth
& Su 2022, "Gaussian differential privacy", JRSS-B, Cor. 3.3), hence ``delta_G`` at ``eps`` (Cor. 2.13 there is
the Balle-Wang profile). Step (c) then gives ``delta_G + 1 - q <= delta_G + delta_tau``. ∎ Round 2 keeps
more words than one round when the units' released words free enough weight to pay for ``sigma_2 > sigma``; it is
not a theorem that it does (docs/results/vocabulary_selection.md measures it); the default stays one round, and
the pipeline picks two rounds from public facts (:func:`selection_method`).

Not implemented: MaxAdaptiveDegree and MAD2R (Chen, Cohen-Addad, Epasto & Zadimoghaddam 2025, "Scalable private
partition selection via adaptive weighting", ICML), which reroute weight within one round from the exact totals;
their sensitivity lemma was not at hand, and a rerouting derived without it (each word above a cap scaled down,
the freed weight spread over the unit's other words) reacts in every unit that shares a word with an added one,
whose L2 sensitivity is not bounded by 1 by the argument above.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from operator import itemgetter
from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy import special

from ._names import DEFAULT_NEIGHBOURS, NEIGHBOURS, UNITS, neighbour_factor
from ._progress import timed
from ._validation import check_delta, check_epsilon, check_int, check_option, check_random_state, check_real
from .rdp.ledger import ApproxEntry, GaussianEntry
from .topics import top_indices

#: share of delta given to the threshold (the rest calibrates sigma); see the module docstring
THRESHOLD_DELTA_SHARE = 0.5
#: words contributed by each unit (``k``)
DEFAULT_MAX_WORDS_PER_UNIT = 300
#: how the words are selected (module docstring): one noisy threshold, or two rounds, the second without the first's
SELECTION_METHODS: tuple[str, ...] = ("weighted-gaussian", "two-round")
DEFAULT_SELECTION_METHOD = "weighted-gaussian"
#: the two-round selection's first round: its share of the Gaussian budget (``mu_1^2 / mu^2``)
FIRST_ROUND_SHARE = 0.2
#: :func:`selection_method` picks two rounds from this many units per word ``tau sqrt(k)`` up
#: (docs/results/vocabulary_selection.md)
TWO_ROUND_FROM = 6.0
#: :func:`words_per_unit`'s share of the units a word may need (docs/results/vocabulary_selection.md)
WORDS_PER_UNIT_SHARE = 0.4

# a word of a public list: lower-case letters only, the token rule of topicdp.corpus (no digits, no "_")
_WORD = re.compile(r"[^\W\d_]+")


def load_vocabulary(path: str | os.PathLike) -> tuple[str, ...]:
    """Read a public word list: one word per line, UTF-8, ``#`` starts a comment; the words in file order.

    Words must be lower-case runs of letters (the tokens :mod:`topicdp.corpus` produces), so a word that could never
    match is an error. A ``ValueError`` names the file and line: several words on a line, a word that is not
    lower-case letters, duplicates (all listed), no word, or bytes that are not UTF-8.
    """
    words: list[str] = []
    first_line: dict[str, int] = {}
    duplicates: list[str] = []
    try:
        with open(path, "rb") as fh:  # decoded line by line, so an invalid byte is reported with its line
            for lineno, raw in enumerate(fh, 1):
                try:
                    line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise ValueError(f"{path}:{lineno}: not UTF-8 (byte {exc.start + 1} of the line)") from None
                word = line.split("#", 1)[0].strip()  # '#' cannot occur in a word (letters only)
                if not word:
                    continue
                if len(word.split()) > 1:
                    raise ValueError(f"{path}:{lineno}: one word per line expected, got {len(word.split())}")
                if not _WORD.fullmatch(word) or word != word.lower():
                    raise ValueError(f"{path}:{lineno}: {word!r} is not a lower-case word of letters "
                                     "(tokens are lower-cased runs of letters; it could never match)")
                if word in first_line:
                    duplicates.append(f"{word!r} (lines {first_line[word]} and {lineno})")
                    continue
                first_line[word] = lineno
                words.append(word)
    except IsADirectoryError:
        raise ValueError(f"{path}: is a directory, not a word list") from None
    if duplicates:
        shown = ", ".join(duplicates[:10]) + (f" and {len(duplicates) - 10} more" if len(duplicates) > 10 else "")
        raise ValueError(f"{path}: duplicate words: {shown}")
    if not words:
        raise ValueError(f"{path}: the word list is empty (no word outside blank lines and '#' comments)")
    return tuple(words)


@dataclass(frozen=True)
class DPVocabulary:
    """A vocabulary selected under (epsilon, delta)-DP, with everything its privacy statement needs.

    ``words`` are sorted; ``delta_gaussian`` and ``delta_threshold`` split ``delta`` between ``sigma`` and ``tau``
    (a word needs about ``tau sqrt(s)`` units of ``s`` words); ``sensitivity`` is 1 or sqrt(2); ``seeded`` marks
    noise from a caller's seed (for tests).
    """

    words: tuple
    epsilon: float
    delta: float
    delta_gaussian: float
    delta_threshold: float
    sigma: float
    tau: float
    sensitivity: float
    unit: str
    neighbours: str
    max_words_per_unit: int
    max_features: int | None
    seeded: bool
    method: str = "weighted-gaussian"
    rounds: tuple = ()

    def __len__(self) -> int:
        return len(self.words)

    def to_dict(self) -> dict:
        """JSON-ready description for a privacy report, without the word list (every value public or a DP output)."""
        d = asdict(self)
        del d["words"]
        two = self.method == "two-round"
        d.update(
            mechanism="gaussian-threshold partition selection" + (" in two rounds" if two else ""),
            n_words=len(self.words),
            calibration="analytic",
            composition="gaussian (sigma, sensitivity) plus delta_threshold added to the total delta",
            rounds=[dict(sigma=s, tau=t, n_words=n) for s, t, n in self.rounds],
            references=[
                "Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin 2020, Differentially private set union",
                "Desfontaines, Voss, Gipson & Mandayam 2022, Differentially private partition selection",
                "Balle & Wang 2018, Improving the Gaussian mechanism for differential privacy, Thm. 8",
            ] + ([
                "Swanberg, Desfontaines & Haney 2023, DP-SIPS: a simpler, more scalable mechanism for "
                "differentially private partition selection",
                "Dong, Roth & Su 2022, Gaussian differential privacy, Cor. 3.3",
            ] if two else []),
        )
        return d

    def add_to_ledger(self, ledger, name: str = "vocabulary selection") -> None:
        """Record this selection in a :class:`topicdp.rdp.PrivacyLedger`: a Gaussian entry and ``(0, delta_threshold)``."""
        ledger.record(selection_entries(self.sigma, self.delta, self.unit, self.neighbours, name))


def selection_sigma(epsilon: float, delta: float, neighbours: str) -> float:
    """The selection's noise std (analytic, on the part of delta the threshold leaves): the one calibration that the
    plan's planned entries and :func:`calibrate_selection` both use."""
    from .rdp import calibrate_gaussian

    return calibrate_gaussian(epsilon, delta - THRESHOLD_DELTA_SHARE * delta, neighbour_factor(neighbours),
                              method="analytic")


def selection_entries(sigma: float, delta: float, unit: str, neighbours: str,
                      name: str = "vocabulary selection") -> list:
    """The ledger entries of a selection with noise ``sigma`` at total ``delta``: the Gaussian entry and the
    threshold's ``(0, delta_threshold)``; planned (the plan) and recorded (the selection) alike."""
    return [GaussianEntry(name, sigma, neighbour_factor(neighbours), unit=unit, neighbours=neighbours),
            ApproxEntry(f"{name} (threshold)", 0.0, THRESHOLD_DELTA_SHARE * delta, unit=unit, neighbours=neighbours)]


def unit_top_words(tokens: Iterable[str] | Mapping[str, int], k: int) -> tuple[str, ...]:
    """The ``k`` most frequent distinct tokens of one unit (a sequence or a word -> count mapping), ties by code point;
    sorted. A function of this unit's tokens only.
    """
    return _top_k(tokens if isinstance(tokens, Mapping) else Counter(tokens), k)


def _top_k(counts: Mapping[str, int], k: int) -> tuple[str, ...]:
    if len(counts) > k:  # by word, then stably by count: the most frequent first, ties by code point
        items = sorted(counts.items())
        items.sort(key=itemgetter(1), reverse=True)
        counts = dict(items[:k])
    return tuple(sorted(counts))


def unit_word_sets(
    texts: Sequence[str],
    users: Sequence | None = None,
    *,
    unit: str = "user",
    max_words_per_unit: int = DEFAULT_MAX_WORDS_PER_UNIT,
    stop_words: str | Sequence[str] | None = "english",
    min_token_length: int = 3,
    n_jobs: int = 1,
) -> dict:
    """Each unit's word set ``S_u``, keyed by user id or document position, tokenised as :meth:`Corpus.from_texts`;
    units without a token are left out. ``n_jobs`` > 1 splits the units over forked processes (as
    :func:`topicdp.corpus.count_words`); the sets do not depend on it.
    """
    from .corpus import forked_map, parallel_jobs

    unit = check_option(unit, "unit", UNITS)
    k = check_int(max_words_per_unit, "max_words_per_unit", low=1)
    texts = list(texts)
    if not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a sequence of str")
    if unit == "document":
        users = range(len(texts))
    elif users is None:
        raise ValueError("users is required for unit='user' (one user id per text)")
    else:
        users = list(users)
        if len(users) != len(texts):
            raise ValueError(f"users must give one user id per text ({len(texts)}), got {len(users)}")
    by_unit: dict = {}
    for text, user in zip(texts, users):
        by_unit.setdefault(user, []).append(text)
    parts = forked_map(_chunk_word_sets, list(by_unit.items()), parallel_jobs(n_jobs, len(texts)), k, stop_words,
                       min_token_length)
    return {u: words for part in parts for u, words in part}


def _chunk_word_sets(units: list, k: int, stop_words, min_token_length: int) -> list:
    """``(unit, S_u)`` of each ``(unit, texts)`` with a token: :func:`unit_word_sets` in one process."""
    from .corpus import token_finder

    find, stop = token_finder(stop_words, min_token_length)
    out = []
    for unit, texts in units:
        counts: Counter = Counter()
        for text in texts:
            counts.update(find(text))
        for w in stop.intersection(counts):
            del counts[w]
        if counts:
            out.append((unit, _top_k(counts, k)))
    return out


def calibrate_selection(epsilon: float, delta: float, max_words_per_unit: int,
                        neighbours: str = DEFAULT_NEIGHBOURS) -> tuple[float, float]:
    """``(sigma, tau)`` of the selection: each of the two parts of delta at most ``delta/2`` (module docstring)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_int(max_words_per_unit, "max_words_per_unit", low=1)
    neighbours = check_option(neighbours, "neighbours", NEIGHBOURS)
    sigma = selection_sigma(epsilon, delta, neighbours)
    return sigma, _threshold(sigma, THRESHOLD_DELTA_SHARE * delta, k)


def words_per_unit(epsilon: float, delta: float, n_units: int, neighbours: str = DEFAULT_NEIGHBOURS,
                   share: float = WORDS_PER_UNIT_SHARE, bounds: tuple[int, int] = (50, 1000)) -> int:
    """A per-unit word cap ``k`` from public facts: the largest ``k`` in ``bounds`` whose units per word ``tau(k)
    sqrt(k)`` are at most ``share`` of ``n_units`` (stated, or a DP count), the smallest if none is. A larger ``k``
    counts more of each unit's words but raises the units a word needs; ``tau(k) sqrt(k)`` grows with ``k``, so the
    search is a bisection (docs/results/vocabulary_selection.md measures the curve it follows)."""
    n_units = check_int(n_units, "n_units", low=1)
    low, high = (check_int(b, "bounds", low=1) for b in bounds)

    def fits(k: int) -> bool:
        return calibrate_selection(epsilon, delta, k, neighbours)[1] * math.sqrt(k) <= share * n_units

    if not fits(low):
        return low
    while low < high:  # invariant: fits(low)
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


def selection_method(epsilon: float, delta: float, n_units: int, max_words_per_unit: int = DEFAULT_MAX_WORDS_PER_UNIT,
                     neighbours: str = DEFAULT_NEIGHBOURS) -> str:
    """The method the pipeline selects with, from public facts: ``"two-round"`` when the units (stated, or a DP
    count) number at least :data:`TWO_ROUND_FROM` times the units a word needs (``tau sqrt(k)``), so that round 1
    releases enough of each unit's words to pay for round 2's larger noise; else ``"weighted-gaussian"``."""
    n_units = check_int(n_units, "n_units", low=1)
    k = check_int(max_words_per_unit, "max_words_per_unit", low=1)
    _, tau = calibrate_selection(epsilon, delta, k, neighbours)
    return "two-round" if n_units >= TWO_ROUND_FROM * tau * math.sqrt(k) else "weighted-gaussian"


def _threshold(sigma: float, delta_tau: float, k: int) -> float:
    """The smallest ``tau`` with :func:`threshold_delta` at most ``delta_tau`` (Gopi et al.'s closed form, then
    rounded upward by the package's one search until the evaluated bound holds with a relative margin of 1e-10)."""
    from .rdp import smallest_meeting

    # for each s: Phi((tau - 1/sqrt s)/sigma) = (1 - delta_tau)^(1/s); the complement, accurate for tiny delta_tau
    s = np.arange(1, k + 1, dtype=np.float64)
    tail = -np.expm1(np.log1p(-delta_tau) / s)
    tau = float(np.max(1.0 / np.sqrt(s) - sigma * special.ndtri(tail)))  # Phi^{-1}(1 - t) = -Phi^{-1}(t)
    return smallest_meeting(lambda t: threshold_delta(t, sigma, k), delta_tau * (1.0 - 1e-10), root=tau)


def round_calibration(epsilon: float, delta: float, max_words_per_unit: int, neighbours: str = DEFAULT_NEIGHBOURS,
                      first_share: float = FIRST_ROUND_SHARE) -> tuple[tuple[float, float], tuple[float, float]]:
    """``((sigma_1, tau_1), (sigma_2, tau_2))`` of the two-round selection (module docstring): the rounds' noises
    compose to the one-round ``sigma`` exactly (``sigma_1 = sigma / sqrt(share)``, ``sigma_2 = sigma /
    sqrt(1 - share)``, so ``mu_1^2 + mu_2^2 = mu^2``) and each round's threshold takes half of ``delta_threshold``."""
    share = check_real(first_share, "first_share", low=0.0, high=1.0)
    sigma, _ = calibrate_selection(epsilon, delta, max_words_per_unit, neighbours)
    delta_tau = THRESHOLD_DELTA_SHARE * delta / 2
    s1, s2 = sigma / math.sqrt(share), sigma / math.sqrt(1.0 - share)
    return (s1, _threshold(s1, delta_tau, max_words_per_unit)), (s2, _threshold(s2, delta_tau, max_words_per_unit))


def threshold_delta(tau: float, sigma: float, max_words_per_unit: int) -> float:
    """``max_{1<=s<=k} 1 - Phi((tau - 1/sqrt(s))/sigma)^s``: the threshold part of delta (proof, step (a))."""
    s = np.arange(1, max_words_per_unit + 1, dtype=np.float64)
    return float(np.max(-np.expm1(s * special.log_ndtr((tau - 1.0 / np.sqrt(s)) / sigma))))


def select_vocabulary(
    texts: Sequence[str],
    users: Sequence | None = None,
    *,
    epsilon: float,
    delta: float,
    unit: str = "user",
    neighbours: str = DEFAULT_NEIGHBOURS,
    max_words_per_unit: int = DEFAULT_MAX_WORDS_PER_UNIT,
    max_features: int | None = None,
    method: str = DEFAULT_SELECTION_METHOD,
    random_state=None,
    stop_words: str | Sequence[str] | None = "english",
    min_token_length: int = 3,
    ledger=None,
    n_jobs: int = 1,
) -> DPVocabulary:
    """Select a vocabulary from private texts under ``(epsilon, delta)``-DP at the privacy unit (module docstring).

    Build the corpus on it with ``Corpus.from_texts(texts, users, vocabulary=result.words)``.

    Parameters
    ----------
    users : sequence, optional
        One user id per text; required for ``unit="user"``.
    neighbours : {"add-remove", "replace-one"}
        Replace-one (the number of units stated) costs sensitivity sqrt(2) instead of 1.
    max_words_per_unit : int, default 300
        ``k``: a larger ``k`` lets more of a unit's words count but raises the units a word needs (``tau sqrt(k)``).
    max_features : int, optional
        Keep at most this many words (the largest noisy totals).
    method : {"weighted-gaussian", "two-round"}
        One noisy threshold, or two rounds whose second reroutes each unit's weight from the words the first
        released to its other words (module docstring); the same privacy statement and ledger entries.
    random_state : None, int, SeedSequence or Generator
        ``None`` draws OS entropy; anything else marks the result ``seeded``.
    ledger : topicdp.rdp.PrivacyLedger, optional
        Checked before the texts are read and charged after.
    n_jobs : int, default 1
        Processes tokenising the texts (:func:`unit_word_sets`); the selection does not depend on it.

    Examples
    --------
    >>> texts = ["the cat sat on the mat"] * 100 + ["dogs chase cats"] * 100 + ["a rare zebra"]
    >>> select_vocabulary(texts, unit="document", epsilon=1.0, delta=1e-6, random_state=0,
    ...                   method="weighted-gaussian").words
    ('cat', 'cats', 'chase', 'dogs', 'mat', 'sat')
    """
    def data():
        sets = unit_word_sets(texts, users, unit=unit, max_words_per_unit=max_words_per_unit, stop_words=stop_words,
                              min_token_length=min_token_length, n_jobs=n_jobs)
        return sets if method == "two-round" else word_set_counts(sets)

    return select_vocabulary_from_counts(data, epsilon=epsilon, delta=delta, unit=unit, neighbours=neighbours,
                                         max_words_per_unit=max_words_per_unit, max_features=max_features,
                                         method=method, random_state=random_state, ledger=ledger)


def select_vocabulary_from_counts(
    counts,
    *,
    epsilon: float,
    delta: float,
    unit: str = "user",
    neighbours: str = DEFAULT_NEIGHBOURS,
    max_words_per_unit: int = DEFAULT_MAX_WORDS_PER_UNIT,
    max_features: int | None = None,
    method: str = "weighted-gaussian",
    random_state=None,
    ledger=None,
) -> DPVocabulary:
    """:func:`select_vocabulary` on the word-set counts ``n(w, s)`` (a :class:`WordSetCounts`, summed over shards),
    or, for ``method="two-round"``, on the units' word sets themselves (:func:`unit_word_sets`: the second round
    needs each unit's own set).

    ``counts`` is either of them or a callable returning one, called only after the parameters and the ledger's budget
    are checked (nothing private is read for a refused selection).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    unit = check_option(unit, "unit", UNITS)
    neighbours = check_option(neighbours, "neighbours", NEIGHBOURS)
    k = check_int(max_words_per_unit, "max_words_per_unit", low=1)
    method = check_option(method, "method", SELECTION_METHODS)
    if max_features is not None:
        max_features = check_int(max_features, "max_features", low=1)
    seeded = random_state is not None
    rng = check_random_state(random_state)
    sigma, tau = calibrate_selection(epsilon, delta, k, neighbours)
    rounds = round_calibration(epsilon, delta, k, neighbours) if method == "two-round" else ()
    if ledger is not None:
        ledger.check(selection_entries(sigma, delta, unit, neighbours))

    with timed(f"DP vocabulary selection ({method}): each {unit}'s top {k} words, then the noisy threshold"):
        data = counts() if callable(counts) else counts
        if rounds and isinstance(data, WordSetCounts):
            raise ValueError("method='two-round' needs the units' word sets (unit_word_sets), not their counts")
        if (max(map(len, data.values()), default=0) if rounds else data.max_size) > k:
            raise ValueError(f"counts hold word sets of more than max_words_per_unit={k} words")
        report: tuple = ()
        if rounds:
            words, kept = _two_round(data, rounds, max_features, rng)
            report = tuple((s, t, n) for (s, t), n in zip(rounds, kept))
            tau = rounds[1][1]
        else:
            words = _select(data.totals(), sigma, tau, max_features, rng)
    result = DPVocabulary(
        words=words, epsilon=epsilon, delta=delta, delta_gaussian=delta - THRESHOLD_DELTA_SHARE * delta,
        delta_threshold=THRESHOLD_DELTA_SHARE * delta, sigma=sigma, tau=tau,
        sensitivity=neighbour_factor(neighbours), unit=unit, neighbours=neighbours, max_words_per_unit=k,
        max_features=max_features, seeded=seeded, method=method, rounds=report,
    )
    if ledger is not None:
        result.add_to_ledger(ledger)
    return result


def _two_round(sets: Mapping, rounds, max_features: int | None, rng: np.random.Generator):
    """The two-round selection's words and the number each round kept: round 1 on the word sets, round 2 on each
    unit's set without the words round 1 released (a function of the unit's own set and a DP output)."""
    (sigma_1, tau_1), (sigma_2, tau_2) = rounds
    first = _select(_word_totals(sets), sigma_1, tau_1, max_features, rng)
    left = None if max_features is None else max_features - len(first)
    if left == 0:
        return first, (len(first), 0)
    released = set(first)
    rest = {u: rest for u, words in sets.items() if (rest := tuple(w for w in words if w not in released))}
    second = _select(_word_totals(rest), sigma_2, tau_2, left, rng)
    return tuple(sorted(released.union(second))), (len(first), len(second))


@dataclass(frozen=True)
class VocabularyForecast:
    """How many words a DP selection will keep, predicted before it runs (:func:`forecast_vocabulary`).

    ``units_per_word = tau sqrt(k)``: a word this many units of ``k`` words hold passes with probability 1/2 (units
    with fewer words weigh more); ``share`` is it over ``n_units``; ``expected_words`` comes from a public reference.
    """

    epsilon: float
    delta: float
    unit: str
    n_units: int
    max_words_per_unit: int
    max_features: int | None
    sigma: float
    tau: float
    units_per_word: float
    expected_words: float | None

    @property
    def share(self) -> float:
        return self.units_per_word / self.n_units

    def lines(self) -> list[str]:
        k, unit = self.max_words_per_unit, self.unit
        head = (f"vocabulary under DP (epsilon={self.epsilon:g}, delta={self.delta:g}, {k} words per {unit}): a word "
                f"passes (probability 1/2) when about {self.units_per_word:,.0f} {unit}s hold it among their top {k} words")
        if self.share < 1:
            out = [f"{head} ({self.share:.0%} of the {self.n_units:,} {unit}s)"]
        else:
            out = [f"{head}, more than the about {self.n_units:,} {unit}s the plan counts (stated, or a DP estimate): "
                   f"only words that {unit}s with fewer "
                   f"than {k} words share can pass, and few if any will"]
        if self.expected_words is not None:
            out.append(f"  expected size, from the public reference scaled to {self.n_units:,} {unit}s: "
                       f"about {self.expected_words:,.0f} words" + (f" (of at most {self.max_features:,})"
                                                                    if self.max_features else ""))
        if self.share > SHARE_COMMON_WORDS_ONLY:
            out.append(f"  only words that more than {SHARE_COMMON_WORDS_ONLY:.0%} of the {unit}s use can pass: the "
                       "topics will be made of common words. A public word list "
                       "(vocabulary=VocabularyPolicy.public(words): a list that is not derived from the private "
                       "texts) costs no privacy and avoids this.")
        return out


#: above this share of units per word, only the most common words can pass the selection
SHARE_COMMON_WORDS_ONLY = 0.05


def forecast_vocabulary(
    epsilon: float,
    delta: float,
    n_units: int,
    *,
    unit: str = "user",
    neighbours: str = DEFAULT_NEIGHBOURS,
    max_words_per_unit: int = DEFAULT_MAX_WORDS_PER_UNIT,
    max_features: int | None = None,
    reference_texts: Sequence[str] | None = None,
    reference_users: Sequence | None = None,
    stop_words: str | Sequence[str] | None = "english",
) -> VocabularyForecast:
    """Predict from public quantities how many words :func:`select_vocabulary` will keep.

    A word held by ``m`` units of ``s`` words passes with probability ``Phi((m / sqrt(s) - tau) / sigma)``. With a
    public reference corpus, each word's total is computed as the selection would and scaled by ``n_units / n_ref``:
    ``min(max_features, sum_w Phi((T_ref(w) n_units / n_ref - tau) / sigma))``, assuming the private units use words
    at the reference's rates. ``n_units``: stated public by the release.
    """
    n_units = check_int(n_units, "n_units", low=1)
    k = check_int(max_words_per_unit, "max_words_per_unit", low=1)
    sigma, tau = calibrate_selection(epsilon, delta, k, neighbours)
    expected = None
    if reference_texts is not None:
        sets = unit_word_sets(reference_texts, reference_users, unit=unit, max_words_per_unit=k, stop_words=stop_words)
        if not sets:
            raise ValueError("reference_texts has no token: it cannot forecast the vocabulary")
        totals = np.fromiter(_word_totals(sets).values(), dtype=np.float64)
        expected = float(special.ndtr((totals * (n_units / len(sets)) - tau) / sigma).sum())
        if max_features is not None:
            expected = min(expected, float(max_features))
    return VocabularyForecast(epsilon=float(epsilon), delta=float(delta), unit=check_option(unit, "unit", UNITS),
                              n_units=n_units, max_words_per_unit=k, max_features=max_features, sigma=sigma,
                              tau=tau, units_per_word=tau * math.sqrt(k), expected_words=expected)


def _word_totals(sets: Mapping) -> dict:
    """``T(w)`` of every candidate word from the units' word sets (steps 2-3 of the mechanism)."""
    return word_set_counts(sets).totals()


@dataclass(frozen=True)
class WordSetCounts:
    """``n(w, s)``: how many units of word-set size ``s`` hold word ``w``, as distinct triples ``(words[word[i]],
    size[i], count[i])`` with ``words`` sorted and the triples in the order of ``(word, size)``. A sum over units, so the counts of disjoint shards add (``+``): a
    few bytes per pair, where a ``Counter`` of ``(w, s)`` keys holds a tuple and a dict entry for each."""

    words: tuple[str, ...]
    word: np.ndarray
    size: np.ndarray
    count: np.ndarray

    @classmethod
    def counted(cls, words: Sequence[str], word: np.ndarray, size: np.ndarray, count: np.ndarray) -> "WordSetCounts":
        """The distinct pairs of ``(word, size)`` rows (repeats allowed), their counts summed; ``words`` sorted."""
        if not word.size:
            return cls(tuple(words), word, size, count)
        base = int(size.max()) + 1
        keys, inverse = np.unique(word * base + size, return_inverse=True)
        total = np.bincount(inverse.ravel(), weights=count, minlength=keys.size)  # exact below 2**53
        return cls(tuple(words), keys // base, keys % base, total.astype(np.int64))

    def __add__(self, other: "WordSetCounts") -> "WordSetCounts":
        words = sorted(set(self.words).union(other.words))
        rank = {w: i for i, w in enumerate(words)}
        remap = [np.asarray([rank[w] for w in part.words], dtype=np.int64)[part.word] if part.word.size else part.word
                 for part in (self, other)]
        return WordSetCounts.counted(words, np.concatenate(remap), np.concatenate([self.size, other.size]),
                                     np.concatenate([self.count, other.count]))

    @property
    def max_size(self) -> int:
        return int(self.size.max()) if self.size.size else 0

    def totals(self) -> dict:
        """``T(w) = sum_s n(w, s) / sqrt(s)`` of every word, each sum correctly rounded (``math.fsum``), so that it
        does not depend on the order of the units or of the shards."""
        if not self.word.size:
            return {}
        word = self.word  # sorted (counted)
        terms = (self.count / np.sqrt(self.size)).tolist()  # each n/sqrt(s) rounded once, as math.sqrt and /
        starts = np.flatnonzero(np.r_[True, word[1:] != word[:-1]]).tolist() + [len(terms)]
        return {self.words[int(word[a])]: math.fsum(terms[a:b]) for a, b in zip(starts[:-1], starts[1:])}


def word_set_counts(sets: Mapping) -> WordSetCounts:
    """The :class:`WordSetCounts` of the units' word sets (:func:`unit_word_sets`)."""
    index: defaultdict = defaultdict(itertools.count().__next__)  # each word's number in order of appearance
    ids: list[int] = []
    for ws in sets.values():
        ids.extend(map(index.__getitem__, ws))
    seen = list(index)
    rank = np.empty(len(seen), dtype=np.int64)
    rank[sorted(range(len(seen)), key=seen.__getitem__)] = np.arange(len(seen))
    sizes = np.fromiter(map(len, sets.values()), dtype=np.int64, count=len(sets))
    word = rank[np.asarray(ids, dtype=np.int64)]
    return WordSetCounts.counted(sorted(seen), word, np.repeat(sizes, sizes), np.ones(word.size, dtype=np.int64))


def _select(totals: Mapping[str, float], sigma: float, tau: float, max_features: int | None,
            rng: np.random.Generator) -> tuple[str, ...]:
    """Noisy threshold on the word totals; steps 3-4 of the mechanism."""
    candidates = sorted(totals)  # a canonical order, so a seed gives the same noise to the same word
    if not candidates:
        return ()
    values = np.array([totals[w] for w in candidates], dtype=np.float64)
    noisy = values + rng.normal(0.0, sigma, size=values.size)
    passed = np.flatnonzero(noisy > tau)
    if max_features is not None and passed.size > max_features:
        passed = passed[top_indices(noisy[passed], max_features)]
    return tuple(sorted(candidates[i] for i in passed))
