"""How to read a release's private scores, which have no scale alone, from public facts only: the plan's
:data:`TARGETS` (shares of a non-private LDA's scores, re-exported by :mod:`topicdp.forecast`), a yardstick
(:func:`fit_yardstick`: a non-private gensim LDA with the release's K on the public reference, scored on its held-out
users: exact, free, a scale rather than a paired comparison), and a flag on topics of common words
(:func:`common_word_counts`, against the reference's most frequent words: frequent words co-occur with everything).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from ..corpus import Corpus
from ..topics import reference_lda, top_indices
from .readability import CONTRAST_DEFINITION, _contrast, heldout_npmi, split_users


@dataclass(frozen=True)
class Targets:
    """One unit's targets: NPMI and contrast as shares of a non-private LDA's (same text, ordinary vocabulary),
    diversity, and the matched top-10 overlap with that LDA."""

    npmi: float
    contrast: float
    diversity: float
    overlap: float


#: The targets per unit of privacy (stricter at the document level: a document moves far less than a user).
TARGETS = {"document": Targets(npmi=0.7, contrast=0.5, diversity=0.5, overlap=0.25),
           "user": Targets(npmi=0.5, contrast=0.25, diversity=0.5, overlap=0.15)}

#: the public list of common words: the reference's this many words found in the most documents
N_COMMON = 100
#: a topic is flagged when more than this share of its top words are common
COMMON_SHARE = 0.6
#: the top words each topic is read by (as the private evaluation reads them)
TOP_N = 10
#: the yardstick's held-out share of the reference's users (half: a pair never seen together scores -1, and more
#: text leaves fewer), and the seed of the split and of the LDA
YARDSTICK_HELDOUT, YARDSTICK_SEED = 0.5, 0


def contrast_line(n_across: int | None = None) -> str:
    """One line defining the contrast; ``n_across``: the private evaluation's sample of across pairs per topic."""
    sample = "" if not n_across else (f"; the private evaluation's across mean is over a public random sample of "
                                      f"{n_across} such pairs per topic")
    return (f"contrast = {CONTRAST_DEFINITION}: how much more a topic's top words co-occur with each other than with "
            f"the other topics' top words (about 0 for words dealt to lists at random; NPMI alone rewards lists of "
            f"frequent words, which co-occur with everything){sample}")


def targets_line(unit: str) -> str:
    """The plan's targets at ``unit``, on the yardstick's scale."""
    t = TARGETS[str(unit)]
    return (f"targets at the {unit} level (the plan's): NPMI at least {t.npmi:g}x and "
            f"contrast at least {t.contrast:g}x a non-private LDA's of the same kind of text")


def most_common_words(texts: Sequence[str], *, n: int = N_COMMON, stop_words="english") -> tuple[str, ...]:
    """The ``n`` words of the public ``texts`` found in the most documents (ties by spelling), tokenised as a corpus is."""
    corpus = Corpus.from_texts(list(texts), stop_words=stop_words)
    df = np.asarray((corpus.X > 0).sum(axis=0)).ravel()
    order = sorted(range(df.size), key=lambda j: (-int(df[j]), corpus.vocabulary[j]))
    return tuple(str(corpus.vocabulary[j]) for j in order[:n])


def common_word_counts(top_words: Sequence[Sequence[str]], common: Sequence[str]) -> tuple[int, ...]:
    """For each topic's list, how many of its words are in ``common``."""
    pool = set(common)
    return tuple(sum(1 for w in t if w in pool) for t in top_words)


def is_common(count: int, top_n: int = TOP_N) -> bool:
    """Whether a topic with ``count`` common words among its ``top_n`` is flagged (more than :data:`COMMON_SHARE`)."""
    return count > COMMON_SHARE * top_n


def common_rule(n_common: int = N_COMMON, top_n: int = TOP_N) -> str:
    """How the flag is decided, in one sentence."""
    return (f"common words: decided on public facts only, each released topic's {top_n} top words against the public "
            f"reference's {n_common} words found in the most documents (never the private corpus' frequencies); a "
            f"topic is flagged when more than {COMMON_SHARE * top_n:g} of its {top_n} are among them")


NO_REFERENCE = ("common words: cannot be flagged without public data (--reference): deciding it from the private "
                "corpus' frequencies would be a release nobody accounted for")


@dataclass(frozen=True)
class Yardstick:
    """A non-private LDA's exact scores on public text (``contrast`` None for K = 1), and its top words."""

    npmi: float
    contrast: float | None
    n_topics: int
    scored_on: str
    top_words: tuple

    def line(self) -> str:
        contrast = "-" if self.contrast is None else f"{self.contrast:.3f}"
        return (f"yardstick (free: public data, exact, no budget): a non-private gensim LDA (K = {self.n_topics}, "
                f"seed {YARDSTICK_SEED}, 5 passes) {self.scored_on}: NPMI {self.npmi:.3f}, contrast {contrast}")

    def as_dict(self) -> dict:
        return {**asdict(self), "top_words": [list(t) for t in self.top_words]}


WHOLE = "fitted on the whole public reference and scored on it (too few users to hold any out)"


def _split(corpus):
    """(fit on, score on, how): the reference's users split by a hash of their ids, or the reference twice."""
    try:
        train, test = split_users(corpus, YARDSTICK_HELDOUT, YARDSTICK_SEED)
    except ValueError:
        return corpus, corpus, WHOLE
    if train.n_docs == 0 or test.n_docs == 0:
        return corpus, corpus, WHOLE
    return train, test, (f"fitted on the public reference's other users and scored on its held-out "
                         f"{100 * YARDSTICK_HELDOUT:g}% of users (a hash of the user id)")


#: the limits of an ordinary vocabulary: :meth:`topicdp.pipeline.VocabularyPolicy.from_reference`'s defaults (the
#: pipeline sits above the metrics and is not imported here; a test holds the two equal)
ORDINARY_VOCABULARY = {"min_df": 5, "max_df": 0.5, "max_features": 5000}


def ordinary_vocabulary(texts: Sequence[str], stop_words="english") -> list[str]:
    """The vocabulary an owner would fit a non-private LDA on: public ``texts`` cut to :data:`ORDINARY_VOCABULARY`."""
    limits = ORDINARY_VOCABULARY
    return list(Corpus.from_texts(list(texts), min_df=min(int(limits["min_df"]), len(texts)),
                                  max_df=limits["max_df"], max_features=int(limits["max_features"]),
                                  stop_words=stop_words).vocabulary)


def fit_yardstick(texts: Sequence[str], users: Sequence, n_topics: int, *, vocabulary: Sequence[str] | None = None,
                  stop_words="english") -> Yardstick:
    """The yardstick of a release of ``n_topics`` topics from the public reference's texts and users, fitted on
    ``vocabulary`` (default :func:`ordinary_vocabulary`: a vocabulary selected under DP may hold only common words)."""
    texts = list(texts)
    fitted_on = "the release's words" if vocabulary is not None else "an ordinary vocabulary of the reference"
    if vocabulary is None:
        vocabulary = ordinary_vocabulary(texts, stop_words)
    corpus = Corpus.from_texts(texts, list(users), vocabulary=list(vocabulary), stop_words=stop_words)
    train, test, how = _split(corpus)
    how = f"on {fitted_on}, {how}"
    W = reference_lda(train, n_topics, random_state=YARDSTICK_SEED, passes=5)
    words = list(corpus.vocabulary)
    lists = tuple(tuple(words[j] for j in row) for row in top_indices(W, TOP_N))
    if n_topics < 2:
        return Yardstick(float(heldout_npmi(W, test, top_n=TOP_N)), None, n_topics, how, lists)
    scores = _contrast(W, test, None, TOP_N)
    return Yardstick(float(scores["npmi"]), float(scores["contrast"]), n_topics, how, lists)


def scaled(value: float, interval: Sequence, base: float | None) -> str:
    """``value`` and its interval as multiples of the yardstick's ``base`` ("0.85x [0.48x, 1.21x]"), or "-"."""
    if value is None or base is None or not np.isfinite(value) or not base > 0:
        return "no ratio (the yardstick's is not positive)" if value is not None and np.isfinite(value) else "-"
    ends = ["-" if e is None or not np.isfinite(e) else f"{e / base:.2f}x" for e in interval]
    return f"{value / base:.2f}x [{ends[0]}, {ends[1]}]"


@dataclass(frozen=True)
class PublicScale:
    """What a private evaluation is read against, from public facts only (None without a reference)."""

    unit: str
    yardstick: Yardstick | None = None
    common: tuple | None = None
    note: str | None = None

    def lines(self, evaluation) -> list[str]:
        """The reading of a :class:`~topicdp.metrics.private.PrivateEvaluation`: contrast, targets, yardstick, flags."""
        y, t, e = self.yardstick, TARGETS[self.unit], evaluation
        reading = [contrast_line(e.report.get("n_across")), targets_line(self.unit)]
        if y is None:
            reading.append(self.note or "yardstick: none without a public reference (--reference)")
        else:
            reading += [y.line()] + [f"mean {name} {value:.3f} = {scaled(value, ends, base)} the yardstick's "
                                     f"(target {aim:g}x)" for name, value, ends, base, aim in (
                                         ("NPMI", e.mean_npmi, e.mean_npmi_interval, y.npmi, t.npmi),
                                         ("contrast", e.mean_contrast, e.mean_contrast_interval, y.contrast,
                                          t.contrast))]
        if self.common is None:
            reading.append(NO_REFERENCE)
        else:  # one line per topic: its count, and the flag where it holds
            reading += [common_rule(len(self.common))] + [
                f"  topic {k}: {c} of its {TOP_N} top words are among the reference's {N_COMMON} most common"
                + (": COMMON WORDS, not a theme" if is_common(c) else "")
                for k, c in enumerate(common_word_counts(e.top_words, self.common))]
            if y is not None:
                theirs = common_word_counts(y.top_words, self.common)
                reading.append(f"  the yardstick LDA's topics, for comparison: {', '.join(map(str, theirs))} of "
                               f"{TOP_N}")
        return ["how to read these scores:"] + ["  " + line for line in reading]

    def as_dict(self, top_words) -> dict:
        """The reading in JSON (beside the evaluation in ``topicdp evaluate --out``)."""
        counts = None if self.common is None else list(common_word_counts(top_words, self.common))
        return {"targets": asdict(TARGETS[self.unit]), "contrast_definition": CONTRAST_DEFINITION,
                "yardstick": None if self.yardstick is None else self.yardstick.as_dict(),
                "common_words": None if counts is None else {
                    "rule": common_rule(len(self.common or ())), "counts": counts,
                    "flagged": [is_common(c) for c in counts]}}


def public_scale(unit: str, n_topics: int, reference: tuple | None, *, vocabulary: Sequence[str] | None = None,
                 stop_words="english") -> PublicScale:
    """The :class:`PublicScale` of a release of ``n_topics`` topics at ``unit`` from the public ``reference`` ``(texts,
    users)`` (one too small for an LDA of K topics still gives the common words; the note says why)."""
    if reference is None:
        return PublicScale(str(unit))
    texts, users = reference
    common = most_common_words(texts, stop_words=stop_words)
    try:
        yardstick = fit_yardstick(texts, users, n_topics, vocabulary=vocabulary, stop_words=stop_words)
    except ValueError as exc:
        return PublicScale(str(unit), None, common, f"yardstick: not computed on the reference ({exc})")
    return PublicScale(str(unit), yardstick, common)
