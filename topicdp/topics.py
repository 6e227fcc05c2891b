"""Topic-word matrices before any road touches them: the canonical topic order and gensim's LDA on a Corpus.

:func:`canonical_order` makes a model spec a function of the data (TopicDP Alg. 1 needs f deterministic): topics
sorted by the indices of their heaviest words, first to ``depth``-th, ties by the larger weights; a function of the
*set* of rows. :func:`fit_gensim_lda` is gensim's ``LdaModel`` (Hoffman, Blei & Bach 2010) on a Corpus' vocabulary,
behind the ``gensim-lda`` adapter and :func:`reference_lda`; :func:`top_indices` and :func:`matching` are the one home
of top-n indices and of the Hungarian assignment.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np


def top_indices(topic_word, n: int) -> np.ndarray:
    """(K, n) column indices of each row's ``n`` largest entries, largest first (ties: the smaller index)."""
    W = np.asarray(topic_word, dtype=float)
    if W.ndim == 1:
        return np.argsort(-W, kind="stable")[:n]
    return np.argsort(-W, axis=1, kind="stable")[:, :n]


def matching(score: np.ndarray, *, maximize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The one-to-one matching of rows to columns of a (K, K') score matrix with the largest (or, with
    ``maximize=False``, smallest) total (Hungarian algorithm): ``(rows, cols)``, ``rows`` ascending."""
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment(np.asarray(score), maximize=maximize)


#: defaults of gensim ``LdaModel`` as the ``gensim-lda`` adapter and :func:`reference_lda` run it
GENSIM_LDA_DEFAULTS: dict[str, Any] = {"passes": 1, "iterations": 50, "alpha": "symmetric", "chunksize": 2000}


def canonical_order(topic_word: np.ndarray, depth: int = 20) -> np.ndarray:
    """The row permutation that puts ``topic_word`` in canonical order (module docstring), by ``depth`` top words."""
    W = np.asarray(topic_word)
    ranked = top_indices(W, min(depth, W.shape[1]))  # equal weights ranked by word index: deterministic
    depth = ranked.shape[1]
    top_weights = np.take_along_axis(W, ranked, axis=1)
    # np.lexsort sorts by its last key first: primary key ranked[:, 0], ..., then the weights as tiebreak
    keys = [-top_weights[:, i] for i in range(depth - 1, -1, -1)]
    keys += [ranked[:, i] for i in range(depth - 1, -1, -1)]
    return np.lexsort(keys)


def fit_gensim_lda(corpus, n_topics: int, random_state: int, *, model_class=None, document_start: str = "random",
                   doc_weights=None, **params: Any) -> np.ndarray:
    """gensim LDA (``model_class``, default ``LdaModel``) fitted on ``corpus``: its ``get_topics()``, gensim's order.

    ``params``: the model's keyword arguments (no defaults added) and ``init``, public starting topics scaled to
    gensim's starting mass (V per topic; row k of the result grows from row k of ``init``). ``document_start``:
    ``"random"``, gensim's per-chunk ``gamma(100, 1/100)`` draws (a start that depends on a document's position), or
    ``"constant"``, every gamma_d at 1 (:func:`constant_start_lda_class`); ``doc_weights`` weigh each document in the
    M-step's statistic (constant start, ``init``, one chunk), ``max_user_norm`` caps each user's part of each row.
    """
    return gensim_lda_model(corpus, n_topics, random_state, model_class=model_class, document_start=document_start,
                            doc_weights=doc_weights, **params).get_topics()


def gensim_lda_model(corpus, n_topics: int, random_state: int, *, model_class=None, document_start: str = "random",
                     doc_weights=None, max_user_norm=None, **params: Any):
    """The fitted gensim model behind :func:`fit_gensim_lda` (same parameters), e.g. for its lambda."""
    from gensim.models import LdaModel

    model_class = LdaModel if model_class is None else model_class
    if document_start not in ("random", "constant"):
        raise ValueError(f"document_start must be 'random' or 'constant', got {document_start!r}")
    if document_start == "constant":
        if model_class is not LdaModel:
            raise ValueError("document_start='constant' needs model_class gensim.models.LdaModel, got "
                             f"{getattr(model_class, '__name__', model_class)!r}")
        model_class = constant_start_lda_class()
    init = params.pop("init", None)
    if doc_weights is not None and (document_start != "constant" or init is None):
        raise ValueError("doc_weights needs document_start='constant' and public starting topics (init)")
    dictionary, bow = corpus.to_gensim()
    if init is None:
        return model_class(corpus=bow, id2word=dictionary, num_topics=n_topics, random_state=random_state, **params)
    start = np.asarray(init, dtype=np.float64)
    if start.shape != (n_topics, len(dictionary)) or start.min() < 0 or np.any(start.sum(axis=1) <= 0):
        raise ValueError(f"init must be a non-negative ({n_topics}, {len(dictionary)}) array with positive rows")
    model = model_class(corpus=None, id2word=dictionary, num_topics=n_topics, random_state=random_state, **params)
    model.state.sstats[...] = start / start.sum(axis=1, keepdims=True) * start.shape[1]
    model.expElogbeta = np.exp(model.state.get_Elogbeta())
    if doc_weights is not None:  # the bag of words is corpus.X row by row, so the statistic reads X itself
        model.doc_weights_, model.doc_counts_ = np.asarray(doc_weights, dtype=np.float64), corpus.X
        model.doc_users_, model.user_cap_ = corpus.doc_users, max_user_norm
    model.update(bow)
    return model


class _ConstantGammaDraws:
    """``LdaModel.random_state`` during one E-step: ``gamma`` returns the draws' mean (gensim 4 draws nothing else)."""

    def gamma(self, shape: float, scale: float, size) -> np.ndarray:
        return np.full(size, shape * scale)


@lru_cache(maxsize=1)
def constant_start_lda_class():
    """gensim ``LdaModel`` whose E-step starts every document's gamma at 1, the mean of gensim's random start (as
    scikit-learn's LDA does outside training): ``random_state`` is swapped for the draws' mean during ``inference``;
    the rest is gensim's (Hoffman, Blei & Bach 2010). Built on first use: importing topicdp needs no gensim.
    """
    from gensim.models import LdaModel

    from .inference.estep import statistic_from_gamma

    class ConstantStartLdaModel(LdaModel):
        doc_weights_ = None  # (n_docs,) or None: the statistic's document weights, set before update()
        doc_counts_ = None  # the (n_docs, V) counts the chunk holds, set with doc_weights_
        doc_users_ = user_cap_ = None

        def inference(self, chunk, collect_sstats=False):
            rng, self.random_state = self.random_state, _ConstantGammaDraws()
            try:
                if not collect_sstats or self.doc_weights_ is None:
                    return super().inference(chunk, collect_sstats=collect_sstats)
                chunk = list(chunk)
                if len(chunk) != self.doc_weights_.size:
                    raise ValueError("document weights need one chunk of all documents (batch learning)")
                gamma, _ = super().inference(chunk, collect_sstats=False)
            finally:
                self.random_state = rng
            sstats = statistic_from_gamma(self.doc_counts_, gamma, self.expElogbeta, self.doc_weights_,
                                          np.finfo(self.dtype).eps, doc_users=self.doc_users_,
                                          max_user_norm=self.user_cap_)
            return gamma, sstats.astype(self.dtype, copy=False)

    return ConstantStartLdaModel


def reference_lda(corpus, n_topics: int, *, random_state: int = 0, **params: Any) -> np.ndarray:
    """The non-private gensim LDA of ``corpus`` in canonical order, float64, for code below the adapters: the matrix of
    ``GensimLDA(n_topics, random_state, **params).fit_topic_word(corpus)`` (:data:`GENSIM_LDA_DEFAULTS` defaults)."""
    if n_topics > corpus.n_words:
        raise ValueError(f"n_topics must be at most the vocabulary size ({corpus.n_words}), got {n_topics}")
    W = np.asarray(fit_gensim_lda(corpus, n_topics, random_state, **{**GENSIM_LDA_DEFAULTS, **params}),
                   dtype=np.float64)
    if not np.all(np.isfinite(W)):
        raise ValueError("model 'gensim-lda' returned non-finite values (NaN or inf)")
    return np.ascontiguousarray(W[canonical_order(W)])
