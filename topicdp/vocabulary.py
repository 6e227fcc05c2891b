r"""Vocabularies a release may use: a public word list, or words selected under DP at the privacy unit.

The vocabulary is the set of columns of every release. Built from the private texts (``min_df``,
``max_features``...), it discloses which words occur — a rare word used by one user reveals that user.
Two ways out:

* :func:`load_vocabulary` — a public word list (one word per line), passed to
  ``Corpus.from_texts(..., vocabulary=words)``; the vocabulary then costs no privacy.
* :func:`select_vocabulary` — differentially private partition selection at the privacy unit (user or
  document): Gaussian thresholding of per-unit-bounded word counts.

The mechanism (:func:`select_vocabulary`)
-----------------------------------------
1. Each unit ``u`` (a user, or a document) contributes the set ``S_u`` of at most ``k``
   (``max_words_per_unit``) distinct words: its ``k`` most frequent tokens, ties broken by the code-point
   order of the words (a fixed public order). ``S_u`` is a function of ``u``'s own tokens only, so changing
   one unit changes only its own contribution.
2. Its contribution vector is ``c_u = |S_u|^{-1/2} 1_{S_u}``, so ``||c_u||_2 = 1``: a unit with fewer
   than ``k`` distinct words spends its whole L2 budget on them (weight ``1/sqrt(|S_u|) >= 1/sqrt(k)``).
3. ``T_D = sum_u c_u``; every word ``w`` with ``T_D(w) > 0`` (the candidates) gets
   ``T_D(w) + Z_w`` with ``Z_w ~ N(0, sigma^2)`` i.i.d.
4. The words whose noisy total exceeds ``tau`` are released; if more than ``max_features`` pass, the
   ``max_features`` largest noisy totals are kept (post-processing). Words are returned sorted.

This is the weighted-Gaussian set-union mechanism of Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin
2020, "Differentially private set union" (ICML), with each unit's weight spread uniformly over its own
words; Desfontaines, Voss, Gipson & Mandayam 2022, "Differentially private partition selection" (PoPETs)
analyse the same noise-and-threshold structure. The proof below is self-contained.

Privacy statement
-----------------
Let ``Delta = 1`` for add/remove neighbours (``D' = D`` plus or minus one unit) and ``Delta = sqrt(2)``
for replace-one neighbours (one unit's texts replaced by arbitrary texts, the number of units public;
the relation the rest of topicdp states, hence the default). Let

    delta_G   = Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta)

be the exact privacy profile of the Gaussian mechanism of L2 sensitivity ``Delta`` (Balle & Wang 2018,
"Improving the Gaussian mechanism for differential privacy", ICML, Thm. 8), and

    delta_tau = max_{1 <= s <= k}  1 - Phi((tau - 1/sqrt(s)) / sigma)^s ,

the largest chance that one of the ``s`` words of a unit with ``s`` words, each of total ``1/sqrt(s)``,
passes ``tau``.

**Theorem.** The released set (and even the released words with their noisy totals) is
``(eps, delta_G + delta_tau)``-DP at the unit, for either neighbour relation with its ``Delta``.

*Proof.* Write ``D = D0 + u`` and ``D' = D0 + u'`` (replace-one), or ``D' = D0`` (add/remove; then set
``c_{u'} = 0``; the other direction of add/remove is the same pair with the roles swapped, and the
argument below is symmetric). Let ``C = supp T_D ∩ supp T_D'``, ``B = supp T_D \ C`` and
``B' = supp T_D' \ C``.

(a) *Words unique to one side.* A word ``w`` in ``B`` has ``T_D0(w) = 0`` (else it would be in
``supp T_D'``) and ``c_{u'}(w) = 0``, so ``B ⊆ S_u``, ``|B| <= s := |S_u| <= k``, and
``T_D(w) = 1/sqrt(s)``. The event ``E`` that no word of ``B`` passes the threshold has probability
``q = Phi((tau - 1/sqrt(s))/sigma)^{|B|} >= 1 - delta_tau`` (the noises are independent). Likewise
``q' >= 1 - delta_tau`` for ``B'``. The bound below uses only ``min(q, q')``, i.e. the words of one
unit, so the union is over at most ``k`` words (not ``2k``) even for replace-one.

(b) *Shared words.* On ``C``, ``T_D - T_D' = (c_u - c_{u'})|_C`` and
``||c_u - c_{u'}||_2^2 = ||c_u||^2 + ||c_{u'}||^2 - 2 <c_u, c_{u'}> <= 2`` (the vectors are non-negative;
``= ||c_u||^2 = 1`` for add/remove). Let ``P~`` and ``Q~`` be the laws of the output computed from
the coordinates in ``C`` alone under ``D`` and ``D'``: one and the same post-processing of
``N(T_D|_C, sigma^2 I)`` and ``N(T_D'|_C, sigma^2 I)``, hence ``P~(O) - e^eps Q~(O) <= delta_G`` for every
event ``O``.

(c) *Mixture.* Given ``E`` the output under ``D`` has law ``P~`` (the unique words' noise is
independent of the rest), so ``P = q P~ + (1 - q) P_bad`` and ``Q = q' Q~ + (1 - q') Q_bad``. For any
``O``, if ``q' >= q``::

    P(O) - e^eps Q(O) <= q (P~(O) - e^eps Q~(O)) + (1 - q) <= 1 - q (1 - delta_G),

and if ``q' < q``, writing ``q P~ = q' P~ + (q - q') P~``, the same bound holds with ``q'``. So
``P(O) - e^eps Q(O) <= 1 - (1 - delta_tau)(1 - delta_G) <= delta_G + delta_tau``. ∎

The bound is attained up to ``delta_G delta_tau`` terms: a unit whose ``s`` words nobody else uses, for
the maximising ``s``, added to ``D``, is detected exactly with probability ``delta_tau``
(tests/test_vocabulary.py checks it by exact enumeration).

Calibration and the default split
---------------------------------
All of ``epsilon`` goes to the Gaussian part; ``delta`` is split in half: ``sigma`` is the analytic
calibration ``topicdp.rdp.calibrate_gaussian(epsilon, delta/2, Delta, method="analytic")`` (it satisfies
the exact profile as evaluated) and ``tau`` solves ``delta_tau = delta/2``:
``tau = max_s 1/sqrt(s) + sigma Phi^{-1}((1 - delta/2)^{1/s})`` (Gopi et al.'s threshold for the weighted
Gaussian), rounded upward until the evaluated ``delta_tau <= (1 - 1e-10) delta/2`` (a margin for
rounding). At the noise levels of useful budgets the maximum is at ``s = k``, so spreading the weight
over a unit's own words costs nothing in ``tau``; at very large epsilon (small sigma) ``s = 1`` can set it.
The half split is within 0.5% of the threshold-minimising split for ``eps`` in {0.3, 1, 3},
``delta = 1e-7``, ``k`` in {50, 100, 300} (shares 0.3-0.5 of ``delta`` for the threshold are flat; 0.1 or
0.9 cost 1-5%), so it is fixed rather than a parameter.

Composition
-----------
Step (c) needs only ``P = q P~ + (1-q) P_bad`` and ``Q >= q' Q~``, which survive (adaptive)
composition with later releases: the whole is ``delta_tau`` plus whatever bound holds for the
composition in which this release is the plain Gaussian mechanism ``(sigma, Delta)``. In a
:class:`topicdp.rdp.PrivacyLedger` record it with :meth:`DPVocabulary.add_to_ledger` (a Gaussian entry
and an approx entry ``(0, delta_tau)``).

What is not released: the number of units, the number of candidate words and the noisy totals are
private quantities or their functions and are not part of :class:`DPVocabulary`.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy import special

from ._progress import timed
from ._validation import check_delta, check_epsilon, check_int, check_option, check_random_state
from .rdp.ledger import ApproxEntry, GaussianEntry

from ._names import DEFAULT_NEIGHBOURS, NEIGHBOURS, UNITS  # noqa: E402
#: share of delta given to the threshold (the rest calibrates sigma); see the module docstring
THRESHOLD_DELTA_SHARE = 0.5
#: on blogs (3968 users, delta 1e-7) k = 300 selects about as many or more words than 50 or 100 at
#: every epsilon in {0.3, 1, 3}; 1000 gains from epsilon 1 up and loses at 0.3
#: (docs/results/vocabulary_dp.md)
DEFAULT_MAX_WORDS_PER_UNIT = 300

# a word of a public list: lower-case letters only, the token rule of topicdp.corpus (no digits, no "_")
_WORD = re.compile(r"[^\W\d_]+")


# --------------------------------------------------------------------------------------------------
# public word lists

def load_vocabulary(path: str | os.PathLike) -> tuple[str, ...]:
    """Read a public word list: one word per line, UTF-8, ``#`` starts a comment.

    Blank lines and comments are skipped; surrounding whitespace is stripped; a UTF-8 byte-order mark is
    accepted. Words must be lower case runs of letters (the tokens ``topicdp.corpus`` produces: tokens
    are lower-cased and contain no digits or underscores), so a listed word that can never match a token
    is an error rather than a silently empty column.

    Parameters
    ----------
    path : path-like
        The word list.

    Returns
    -------
    tuple of str
        The words in file order (the column order of a corpus built on them).

    Raises
    ------
    ValueError
        Naming the file and line: a line with more than one word, a word that is not lower case
        letters, duplicated words (all listed), no word at all, or bytes that are not UTF-8.
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


# --------------------------------------------------------------------------------------------------
# the DP selection

@dataclass(frozen=True)
class DPVocabulary:
    """A vocabulary selected under (epsilon, delta)-DP, with everything its privacy statement needs.

    Attributes
    ----------
    words : tuple of str
        The released words, sorted (code-point order).
    epsilon, delta : float
        The guarantee: ``(epsilon, delta)``-DP at ``unit`` under ``neighbours``.
    delta_gaussian, delta_threshold : float
        The split of ``delta``: the Gaussian part (``sigma``) and the threshold part (``tau``).
    sigma : float
        Std of the Gaussian noise on each word's total.
    tau : float
        The threshold on noisy totals. A unit with ``s`` words adds ``1/sqrt(s)`` to each, so a word
        needs about ``tau sqrt(s)`` units of that size.
    sensitivity : float
        L2 sensitivity of the totals on shared words: 1 (add-remove) or sqrt(2) (replace-one).
    unit : {"user", "document"}
    neighbours : {"replace-one", "add-remove"}
    max_words_per_unit : int
        ``k``: words contributed by each unit.
    max_features : int or None
        Cap on the number of released words (post-processing).
    seeded : bool
        The noise came from a caller's seed (not OS entropy); a seeded selection is reproducible by
        whoever knows the seed and is meant for tests.
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

    def __len__(self) -> int:
        return len(self.words)

    def to_dict(self) -> dict:
        """JSON-ready description for a privacy report (without the word list itself).

        Every value is public or a DP output: the parameters, and ``n_words``, the size of the released
        vocabulary (a function of the DP output).
        """
        d = asdict(self)
        del d["words"]
        d.update(
            mechanism="gaussian-threshold partition selection",
            n_words=len(self.words),
            calibration="analytic",
            composition="gaussian (sigma, sensitivity) plus delta_threshold added to the total delta",
            references=[
                "Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin 2020, Differentially private set union",
                "Desfontaines, Voss, Gipson & Mandayam 2022, Differentially private partition selection",
                "Balle & Wang 2018, Improving the Gaussian mechanism for differential privacy, Thm. 8",
            ],
        )
        return d

    def add_to_ledger(self, ledger, name: str = "vocabulary selection") -> None:
        """Record this selection in a :class:`topicdp.rdp.PrivacyLedger` (see "Composition" above).

        Adds a Gaussian entry ``(sigma, sensitivity)`` and an approx entry ``(0, delta_threshold)``, labelled
        with the unit and neighbour relation; the ledger's totals at a total delta then cover this selection
        composed with the other entries. ``select_vocabulary(..., ledger=ledger)`` does this itself, after
        checking the ledger's budget before reading the texts.
        """
        ledger.record(_ledger_entries(self.sigma, self.sensitivity, self.delta_threshold, self.unit,
                                      self.neighbours, name))


def _ledger_entries(sigma: float, sensitivity: float, delta_threshold: float, unit: str, neighbours: str,
                    name: str = "vocabulary selection") -> list:
    return [GaussianEntry(name, sigma, sensitivity, unit=unit, neighbours=neighbours),
            ApproxEntry(f"{name} (threshold)", 0.0, delta_threshold, unit=unit, neighbours=neighbours)]


def unit_top_words(tokens: Iterable[str] | Mapping[str, int], k: int) -> tuple[str, ...]:
    """The ``k`` most frequent distinct tokens of one unit, ties by code-point order; sorted.

    ``tokens`` is the unit's token sequence, or its token counts (a mapping word -> count). A function
    of this unit's tokens only (the property the privacy proof needs).
    """
    return _top_k(tokens if isinstance(tokens, Mapping) else Counter(tokens), k)


def _top_k(counts: Mapping[str, int], k: int) -> tuple[str, ...]:
    top = sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))[:k]
    return tuple(sorted(w for w, _ in top))


def unit_word_sets(
    texts: Sequence[str],
    users: Sequence | None = None,
    *,
    unit: str = "user",
    max_words_per_unit: int = DEFAULT_MAX_WORDS_PER_UNIT,
    stop_words: str | Sequence[str] | None = "english",
    min_token_length: int = 3,
) -> dict:
    """Each unit's contributed word set ``S_u`` (see the module docstring), keyed by unit.

    Units are user ids (``unit="user"``) or document positions (``unit="document"``). Tokenisation is
    ``topicdp.corpus.make_vectorizer(...).build_analyzer()``, the rules of ``Corpus.from_texts``.
    Units without any token contribute nothing and are left out.
    """
    from .corpus import make_vectorizer

    unit = check_option(unit, "unit", UNITS)
    k = check_int(max_words_per_unit, "max_words_per_unit", low=1)
    texts = list(texts)
    if not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a sequence of str")
    analyze = make_vectorizer(stop_words=stop_words, min_token_length=min_token_length).build_analyzer()
    if unit == "document":
        sets = {i: unit_top_words(analyze(t), k) for i, t in enumerate(texts)}
    else:
        if users is None:
            raise ValueError("users is required for unit='user' (one user id per text)")
        users = list(users)
        if len(users) != len(texts):
            raise ValueError(f"users must give one user id per text ({len(texts)}), got {len(users)}")
        counts: dict = {}
        for text, user in zip(texts, users):
            counts.setdefault(user, Counter()).update(analyze(text))
        sets = {u: _top_k(c, k) for u, c in counts.items()}
    return {u: s for u, s in sets.items() if s}


def calibrate_selection(epsilon: float, delta: float, max_words_per_unit: int,
                        neighbours: str = DEFAULT_NEIGHBOURS) -> tuple[float, float]:
    """``(sigma, tau)`` of the selection for a target ``(epsilon, delta)`` (see the module docstring).

    Returns
    -------
    sigma : float
        With ``gaussian_delta(sigma, epsilon, Delta) <= delta/2`` (analytic calibration).
    tau : float
        With ``threshold_delta(tau, sigma, k) <= delta/2``.
    """
    from .rdp import calibrate_gaussian, smallest_meeting

    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_int(max_words_per_unit, "max_words_per_unit", low=1)
    neighbours = check_option(neighbours, "neighbours", NEIGHBOURS)
    delta_tau = THRESHOLD_DELTA_SHARE * delta
    sigma = calibrate_gaussian(epsilon, delta - delta_tau, _sensitivity(neighbours), method="analytic")
    # for each s: Phi((tau - 1/sqrt s)/sigma) = (1 - delta_tau)^(1/s); the complement, accurate for tiny delta_tau
    s = np.arange(1, k + 1, dtype=np.float64)
    tail = -np.expm1(np.log1p(-delta_tau) / s)
    tau = float(np.max(1.0 / np.sqrt(s) - sigma * special.ndtri(tail)))  # Phi^{-1}(1 - t) = -Phi^{-1}(t)
    # the closed form is the root of the package's one search (topicdp.rdp.smallest_meeting; the threshold's
    # delta is non-increasing in tau), which rounds it upward until the evaluated bound holds with a relative
    # margin of 1e-10, covering the rounding error of evaluating it (log_ndtr and expm1 are accurate to a few ulps)
    tau = smallest_meeting(lambda t: threshold_delta(t, sigma, k), delta_tau * (1.0 - 1e-10), root=tau)
    return sigma, tau


def threshold_delta(tau: float, sigma: float, max_words_per_unit: int) -> float:
    """``max_{1<=s<=k} 1 - Phi((tau - 1/sqrt(s))/sigma)^s``: the largest chance that a word of a unit's own
    passes ``tau`` (the threshold part of delta; module docstring, step (a))."""
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
    random_state=None,
    stop_words: str | Sequence[str] | None = "english",
    min_token_length: int = 3,
    ledger=None,
) -> DPVocabulary:
    """Select a vocabulary from private texts under ``(epsilon, delta)``-DP at the privacy unit.

    Gaussian-threshold partition selection (module docstring: mechanism, proof, calibration). Build the
    corpus on the result with ``Corpus.from_texts(texts, users, vocabulary=result.words)`` and compose
    the budget with the release's (:meth:`DPVocabulary.add_to_ledger`).

    Parameters
    ----------
    texts : sequence of str
    users : sequence, optional
        One user id per text; required for ``unit="user"``, ignored for ``unit="document"``.
    epsilon : float
        ``> 0``; all of it goes to the Gaussian noise.
    delta : float
        In (0, 1); half calibrates the noise, half the threshold.
    unit : {"user", "document"}, default "user"
    neighbours : {"add-remove", "replace-one"}, default "add-remove" (``topicdp._names.DEFAULT_NEIGHBOURS``)
        Replace-one (where the number of units is stated) costs sensitivity sqrt(2) instead of 1.
    max_words_per_unit : int, default 300
        ``k >= 1``: each unit contributes its ``k`` most frequent words. Larger ``k`` lets more of a
        unit's words count but raises the number of units a word needs (about ``tau sqrt(k)`` when every
        unit has ``k`` words, since ``tau`` barely depends on ``k``).
    max_features : int, optional
        Keep at most this many words (the largest noisy totals; post-processing).
    random_state : None, int, SeedSequence or Generator
        ``None`` (default) draws the noise from OS entropy; anything else marks the result ``seeded``.
    stop_words, min_token_length
        Tokenisation, exactly as in ``Corpus.from_texts``.
    ledger : topicdp.rdp.PrivacyLedger, optional
        Checked before the texts are read (:class:`topicdp.rdp.BudgetExceededError` if the selection does
        not fit its budget); the selection is recorded in it afterwards (:meth:`DPVocabulary.add_to_ledger`).

    Returns
    -------
    DPVocabulary
        May hold no word when no total clears the threshold (few units, small epsilon, large ``k``).

    Examples
    --------
    Words that 100 documents share clear the threshold; a word of a single document does not:

    >>> texts = ["the cat sat on the mat"] * 100 + ["dogs chase cats"] * 100 + ["a rare zebra"]
    >>> vocabulary = select_vocabulary(texts, unit="document", epsilon=1.0, delta=1e-6, random_state=0)
    >>> vocabulary.words
    ('cat', 'cats', 'chase', 'dogs', 'mat', 'sat')
    """
    def counts() -> Counter:
        return word_set_counts(unit_word_sets(texts, users, unit=unit, max_words_per_unit=max_words_per_unit,
                                              stop_words=stop_words, min_token_length=min_token_length))

    return select_vocabulary_from_counts(counts, epsilon=epsilon, delta=delta, unit=unit, neighbours=neighbours,
                                         max_words_per_unit=max_words_per_unit, max_features=max_features,
                                         random_state=random_state, ledger=ledger)


def select_vocabulary_from_counts(
    counts,
    *,
    epsilon: float,
    delta: float,
    unit: str = "user",
    neighbours: str = DEFAULT_NEIGHBOURS,
    max_words_per_unit: int = DEFAULT_MAX_WORDS_PER_UNIT,
    max_features: int | None = None,
    random_state=None,
    ledger=None,
) -> DPVocabulary:
    """:func:`select_vocabulary` on the units' word-set counts ``n(w, s)`` (:func:`word_set_counts`), summed over
    shards when the corpus is read shard by shard (each unit in one shard).

    ``counts`` is a ``Counter`` or a callable returning one, called only after the parameters and the
    ledger's budget have been checked (so that nothing private is read for a refused selection). The counts
    must come from word sets of at most ``max_words_per_unit`` words; the other parameters are
    :func:`select_vocabulary`'s.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    unit = check_option(unit, "unit", UNITS)
    neighbours = check_option(neighbours, "neighbours", NEIGHBOURS)
    k = check_int(max_words_per_unit, "max_words_per_unit", low=1)
    if max_features is not None:
        max_features = check_int(max_features, "max_features", low=1)
    seeded = random_state is not None
    rng = check_random_state(random_state)
    sigma, tau = calibrate_selection(epsilon, delta, k, neighbours)
    if ledger is not None:
        ledger.check(_ledger_entries(sigma, _sensitivity(neighbours), THRESHOLD_DELTA_SHARE * delta, unit, neighbours))

    with timed(f"DP vocabulary selection: each {unit}'s top {k} words, then the noisy threshold"):
        pairs = counts() if callable(counts) else counts
        if any(size > k for _, size in pairs):
            raise ValueError(f"counts hold word sets of more than max_words_per_unit={k} words")
        words = _select(_totals(pairs), sigma, tau, max_features, rng)
    result = DPVocabulary(
        words=words, epsilon=epsilon, delta=delta, delta_gaussian=delta - THRESHOLD_DELTA_SHARE * delta,
        delta_threshold=THRESHOLD_DELTA_SHARE * delta, sigma=sigma, tau=tau,
        sensitivity=_sensitivity(neighbours), unit=unit, neighbours=neighbours, max_words_per_unit=k,
        max_features=max_features, seeded=seeded,
    )
    if ledger is not None:
        result.add_to_ledger(ledger)
    return result


@dataclass(frozen=True)
class VocabularyForecast:
    """How many words a DP selection will keep, predicted before it runs (:func:`forecast_vocabulary`).

    Attributes
    ----------
    units_per_word : float
        ``tau sqrt(k)``: a word that this many units (each contributing ``k`` words) hold passes with
        probability 1/2. Units with fewer words weigh more (``1/sqrt(s)``), so it is the most a word needs.
    share : float
        ``units_per_word / n_units``: the share of all units a word needs.
    expected_words : float or None
        The expected number of words kept, from a public reference corpus scaled to ``n_units``
        (None without one).
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
    """Predict, from public quantities, how many words :func:`select_vocabulary` will keep (``stop_words``: those the
    selection drops, applied to the reference alike).

    ``sigma`` and ``tau`` are the selection's own calibration (:func:`calibrate_selection`): a function of
    the budget and ``k`` only. A word held by ``m`` units of ``s`` words each has the total ``m / sqrt(s)``
    and passes with probability ``Phi((m / sqrt(s) - tau) / sigma)``, 1/2 at ``m = tau sqrt(s)``; at ``s = k``
    that is :attr:`VocabularyForecast.units_per_word`. With a public reference corpus (texts and users of
    the same kind, not the private ones), each word's total ``T_ref(w)`` is computed exactly as the
    selection would and scaled by ``n_units / n_ref``, and the expected number of words kept is
    ``min(max_features, sum_w Phi((T_ref(w) n_units / n_ref - tau) / sigma))`` -- assuming the private units
    use words at the reference's rates.

    Parameters
    ----------
    epsilon, delta, unit, neighbours, max_words_per_unit, max_features
        As in :func:`select_vocabulary`.
    n_units : int
        Number of privacy units of the private corpus (stated public by the release).
    reference_texts, reference_users : sequences, optional
        A public reference corpus (users required at ``unit="user"``).

    Returns
    -------
    VocabularyForecast
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
    return _totals(word_set_counts(sets))


def word_set_counts(sets: Mapping) -> Counter:
    """``n(w, s)``: how many units of word-set size ``s`` hold word ``w``, from the units' word sets
    (:func:`unit_word_sets`). A sum over units, so the counts of disjoint groups of units (shards) add up to
    the counts of their union (``Counter`` addition), and :func:`select_vocabulary_from_counts` selects on
    them as :func:`select_vocabulary` does on the texts."""
    pairs: Counter = Counter()
    for words in sets.values():
        _add_unit(pairs, words)
    return pairs


def _add_unit(pairs: Counter, words: Sequence[str]) -> None:
    """Count one unit's contribution: each of its ``s`` words gets weight ``1/sqrt(s)`` (step 2)."""
    pairs.update((w, len(words)) for w in words)


def _totals(pairs: Mapping[tuple, int]) -> dict:
    """``T(w) = sum_s n(w, s) / sqrt(s)`` from the counts ``n(w, s)`` of units of size ``s`` holding ``w``.

    Summed with ``math.fsum`` (correctly rounded), so a total does not depend on the order of the units.
    """
    parts: dict = {}
    for (w, s), n in pairs.items():
        parts.setdefault(w, []).append(n / math.sqrt(s))
    return {w: math.fsum(p) for w, p in parts.items()}


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
        passed = passed[np.argsort(-noisy[passed], kind="stable")[:max_features]]
    return tuple(sorted(candidates[i] for i in passed))


def _sensitivity(neighbours: str) -> float:
    return 1.0 if neighbours == "add-remove" else math.sqrt(2.0)
