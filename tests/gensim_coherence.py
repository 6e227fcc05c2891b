"""(Moved from topicdp.metrics.coherence: only the tests call it.) Topic coherence of a released topic-word matrix on held-out token lists, through gensim's CoherenceModel.

Measures (Röder, Both & Hinneburg, WSDM 2015): ``c_npmi`` (recommended), ``u_mass`` (Mimno et al., EMNLP 2011,
gensim's eps = 1e-12) and ``c_v`` (older work only). gensim scores a top word the texts never contain at NPMI +inf
and u_mass 0, its best values; here every pair with an unseen word gets the worst value (NPMI -1, u_mass
``log(1e-12)``): a topic's value is ``(v_seen P(s) + worst (P(n) - P(s))) / P(n)``, ``P(t) = t (t - 1) / 2``, exact for
these pair means. ``c_v`` is not pair-additive and is NaN for such topics.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from topicdp._validation import check_int, check_option
from kendall_distances import top_n as _top_n

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
    """Coherence of each topic's top words on held-out ``texts`` (gensim ``CoherenceModel``; only each row's ranking
    is used). ``window_size``: the sliding window of ``c_npmi``/``c_v`` (gensim's 10 and 110 when None);
    ``per_topic``: the K values instead of their mean.
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
