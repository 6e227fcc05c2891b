"""Topic coherence of a released topic-word matrix on held-out texts, through gensim's CoherenceModel.

Measures (Röder, Both & Hinneburg, "Exploring the space of topic coherence measures", WSDM 2015):

* ``c_npmi`` (recommended): mean over pairs of a topic's top words of the normalised PMI
  log(P(a, b) / (P(a) P(b))) / -log P(a, b), probabilities estimated from sliding windows (gensim's
  default width 10) over the texts; in [-1, 1], 1 for words that always co-occur.
* ``u_mass`` (Mimno et al., EMNLP 2011): mean over ordered pairs (w_i, w_j), j < i in the top list, of
  log((D(w_i, w_j) + eps) / D(w_j)) with D document co-occurrence counts of the texts (gensim's
  eps = 1e-12, not Mimno's +1); <= 0 up to eps.
* ``c_v``: only for comparison with older work; its authors no longer recommend it.

The texts must be held out (not the training documents), as token lists over the same vocabulary.

Top words that never occur in the texts: noisy releases often rank rare words highly, and gensim
mishandles such words (NPMI divides by P(w) = 0 and returns +inf; u_mass scores a pair whose
conditioning word is unseen as 0, its *best* value). We therefore score every pair that involves an
unseen word with the measure's *worst* value -- NPMI -1 (the value for words that never co-occur),
u_mass log(eps) = log(1e-12) (its infimum, since D(w_j) <= N) -- and let gensim score the pairs of seen
words: a topic's value is (v_seen P(s) + worst (P(n) - P(s))) / P(n) with P(t) = t (t - 1) / 2 pairs, n top
words of which s are seen, v_seen gensim's mean over the seen pairs (both measures are means over
pairs, so this is exact). ``c_v`` (not pair-additive) is left to gensim and is NaN for such topics.
:func:`count_unseen_topic_words` reports how many top words the texts never contain.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .._validation import check_int, check_option
from .ranking import top_n as _top_n

MEASURES = ("c_npmi", "u_mass", "c_v")
_WORST = {"c_npmi": -1.0, "u_mass": float(np.log(1e-12))}  # gensim's EPSILON in u_mass


def topic_top_words(topic_word, vocabulary: Sequence[str], top_n: int = 10) -> list[list[str]]:
    """Each topic's ``top_n`` words, most probable first (ties broken by the smaller word index)."""
    W = np.asarray(topic_word, dtype=float)
    if W.ndim != 2 or W.shape[1] != len(vocabulary):
        raise ValueError(f"topic_word must be (K, {len(vocabulary)}) to match the vocabulary, got {W.shape}")
    return [[vocabulary[i] for i in _top_n(row, top_n)] for row in W]


def count_unseen_topic_words(topic_word, vocabulary: Sequence[str], texts, top_n: int = 10) -> int:
    """Number of (topic, word) entries among the top-``top_n`` lists whose word never occurs in ``texts``."""
    seen = {tok for text in texts for tok in text}
    return sum(w not in seen for topic in topic_top_words(topic_word, vocabulary, top_n) for w in topic)


def topic_coherence(
    topic_word,
    vocabulary: Sequence[str],
    texts: Sequence[Sequence[str]],
    *,
    measure: str = "c_npmi",
    top_n: int = 10,
    window_size: int | None = None,
    per_topic: bool = False,
):
    """Coherence of each topic's top words on held-out ``texts`` (gensim ``CoherenceModel``).

    Parameters
    ----------
    topic_word : (K, V) array-like
        Released topics (any real scores; only each row's ranking is used).
    vocabulary : sequence of V str
        Column j of ``topic_word`` is ``vocabulary[j]``.
    texts : sequence of token lists
        Held-out documents.
    measure : {"c_npmi", "u_mass", "c_v"}
    top_n : int, default=10
    window_size : int, optional
        Sliding-window width for ``c_npmi``/``c_v`` (gensim's defaults 10 and 110 when None).
    per_topic : bool, default=False
        Return the K per-topic values instead of their mean.

    Returns
    -------
    float or ndarray of shape (K,)
    """
    from gensim.corpora import Dictionary

    check_option(measure, "measure", MEASURES)
    top_n = check_int(top_n, "top_n", low=2, high=len(vocabulary))
    texts = [list(t) for t in texts]
    if not any(texts):
        raise ValueError("texts must contain at least one non-empty token list")
    topics = topic_top_words(topic_word, vocabulary, top_n)
    dictionary = Dictionary(texts)
    if measure == "c_v":
        # topic words absent from the texts still need ids; registering them changes no count used
        dictionary.add_documents([sorted({w for t in topics for w in t} - set(dictionary.token2id))])
        values = _gensim_coherence(topics, texts, dictionary, measure, window_size)
    else:
        values = _pairwise_with_unseen(topics, texts, dictionary, measure, window_size)
    return values if per_topic else float(values.mean())


def _gensim_coherence(topics, texts, dictionary, measure, window_size) -> np.ndarray:
    from gensim.models.coherencemodel import CoherenceModel

    kwargs = {"window_size": window_size} if window_size is not None else {}
    cm = CoherenceModel(
        topics=topics,
        texts=texts,
        dictionary=dictionary,
        coherence=measure,
        topn=max(len(t) for t in topics),
        processes=1,  # the machine is shared; gensim would otherwise fork cpu_count - 1 workers
        **kwargs,
    )
    return np.asarray(cm.get_coherence_per_topic(), dtype=float)


def _pairwise_with_unseen(topics, texts, dictionary, measure, window_size) -> np.ndarray:
    """gensim on the seen words; pairs with an unseen word get the worst value (module docstring)."""
    kept = [[w for w in t if w in dictionary.token2id] for t in topics]
    scorable = [i for i, t in enumerate(kept) if len(t) >= 2]
    seen_values = np.zeros(len(topics))
    if scorable:
        seen_values[scorable] = _gensim_coherence([kept[i] for i in scorable], texts, dictionary, measure, window_size)
    pairs = lambda t: t * (t - 1) / 2  # noqa: E731
    n = np.array([len(t) for t in topics], dtype=float)
    s = np.array([len(t) for t in kept], dtype=float)
    return (seen_values * pairs(s) + _WORST[measure] * (pairs(n) - pairs(s))) / pairs(n)
