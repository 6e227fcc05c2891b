"""Topic-word matrices before any road touches them: the canonical topic order and gensim's LDA on a Corpus.

Two things several layers need, kept below all of them:

* :func:`canonical_order` — the deterministic row order of a topic-word matrix that makes a model spec a
  function of the data (:mod:`topicdp.adapters`, TopicDP Alg. 1 needs f deterministic) and that the audit's
  setups use;
* :func:`fit_gensim_lda` — gensim's ``LdaModel`` (online variational Bayes, Hoffman, Blei & Bach 2010) fitted
  on a :class:`~topicdp.Corpus`' own vocabulary, behind the ``gensim-lda`` adapter
  (:class:`topicdp.adapters.GensimLDA`) and the non-private LDA a forecast compares a release with
  (:func:`reference_lda`, used by :func:`topicdp.forecast.forecast_on_reference`).

Canonical order
---------------
Topics are sorted by their ranked word lists: topic a precedes topic b when, comparing the indices of
their most heavily weighted words first, then of their second most heavily weighted, and so on, a's word
index is the smaller at the first place they differ. Remaining ties (identical rankings of the
top ``depth`` words) are broken by the larger top weights. The rule is a deterministic function of the *set*
of rows, so any permutation of a model's topics gives the same matrix; it is stable under small
perturbations as long as the topics' top words are distinct.
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
    """Row permutation that puts ``topic_word`` in canonical order (see module docstring).

    Parameters
    ----------
    topic_word : (K, V) array-like
    depth : int, default=20
        Number of top words compared (at most V).

    Returns
    -------
    (K,) integer array
        ``topic_word[canonical_order(topic_word)]`` is the matrix in canonical order.
    """
    W = np.asarray(topic_word)
    depth = min(depth, W.shape[1])
    # stable argsort on -W ranks equal weights by word index, so the ranking itself is deterministic
    ranked = np.argsort(-W, axis=1, kind="stable")[:, :depth]
    top_weights = np.take_along_axis(W, ranked, axis=1)
    # np.lexsort sorts by its last key first: primary key ranked[:, 0], ..., then the weights as tiebreak
    keys = [-top_weights[:, i] for i in range(depth - 1, -1, -1)]
    keys += [ranked[:, i] for i in range(depth - 1, -1, -1)]
    return np.lexsort(keys)


def fit_gensim_lda(corpus, n_topics: int, random_state: int, *, model_class=None, document_start: str = "random",
                   doc_weights=None, **params: Any) -> np.ndarray:
    """gensim LDA fitted on ``corpus`` (ids = column indices); its ``get_topics()`` in gensim's topic order.

    Parameters
    ----------
    corpus : topicdp.Corpus
        Anything with ``to_gensim() -> (Dictionary, bag-of-words corpus)``.
    n_topics, random_state : int
        ``num_topics`` and ``random_state`` of the gensim model.
    model_class : type, optional
        ``gensim.models.LdaModel`` (default) or a compatible class (``LdaMulticore``).
    **params
        Further keyword arguments of the model (all of them: no defaults are added here), and ``init``: public
        starting topics (K, V). With them the topics' variational parameters start at ``init`` scaled to gensim's
        own starting mass (V per topic, as its Gamma(100, 1/100) draws) instead of random draws, and the fit
        updates from there (``LdaModel.update``); row k of the result grew from row k of ``init``.
    document_start : {"random", "constant"}, default="random"
        How each E-step starts a document's variational Dirichlet parameter gamma_d. ``"random"``: gensim's
        ``LdaModel.inference`` draws ``random_state.gamma(100, 1/100, (len(chunk), K))`` for every chunk, so a
        document's start depends on its position in the corpus and on every draw before it (removing one document
        changes the start of all documents after it). ``"constant"``: gamma_d starts at 1 for every topic (the mean
        of those draws), a function of nothing but K; gensim's own update equations then run unchanged
        (:func:`constant_start_lda_class`). Needs ``model_class`` ``LdaModel`` (the default).
    doc_weights : (n_docs,) array, optional
        Each document's weight in the M-step's statistic (its E-step unchanged; :func:`constant_start_lda_class`).
        Needs ``document_start="constant"``, ``init`` and one chunk of all documents.
    max_user_norm : float, optional (a keyword of ``**params``)
        With ``doc_weights``, each user's part of each topic's row is capped too
        (:func:`topicdp.inference.estep.user_topic_weights`).

    Returns
    -------
    (n_topics, V) array
        The normalised variational topic-word parameters, rows on the simplex.
    """
    return gensim_lda_model(corpus, n_topics, random_state, model_class=model_class, document_start=document_start,
                            doc_weights=doc_weights, **params).get_topics()


def gensim_lda_model(corpus, n_topics: int, random_state: int, *, model_class=None, document_start: str = "random",
                     doc_weights=None, max_user_norm=None, **params: Any):
    """The fitted gensim model behind :func:`fit_gensim_lda` (same parameters), e.g. for its lambda
    (``model.state.get_lambda()``)."""
    if model_class is None:
        from gensim.models import LdaModel

        model_class = LdaModel
    if document_start not in ("random", "constant"):
        raise ValueError(f"document_start must be 'random' or 'constant', got {document_start!r}")
    if document_start == "constant":
        from gensim.models import LdaModel

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
    """Stands in for ``LdaModel.random_state`` during one E-step: ``gamma(shape, scale, size)`` returns the draws' mean.

    gensim's ``LdaModel.inference`` starts each chunk's gamma with ``self.random_state.gamma(100., 1. / 100.,
    (len(chunk), num_topics))`` and draws nothing else (gensim 4.x; ``tests/test_stable_models.py`` checks that
    the start is the only draw an E-step makes and that the result no longer depends on document positions).
    """

    def gamma(self, shape: float, scale: float, size) -> np.ndarray:
        return np.full(size, shape * scale)


@lru_cache(maxsize=1)
def constant_start_lda_class():
    """gensim ``LdaModel`` whose E-step starts every document's gamma at 1 (the mean of gensim's random start).

    Only ``inference`` is overridden, and only its start: during the call the model's ``random_state`` is an object
    whose ``gamma`` draws return their mean, then the model's own generator is put back. The coordinate ascent
    (Hoffman, Blei & Bach 2010, the E-step of their Algorithm 1/2 as gensim implements it, with its per-document
    ``iterations`` and ``gamma_threshold``), the M-step and the topics' start are gensim's. This is also the start
    scikit-learn's ``LatentDirichletAllocation`` uses outside training (``_update_doc_distribution`` with
    ``random_state=None``: ones).

    Returns
    -------
    type
        A subclass of ``gensim.models.LdaModel`` (built on first use so that importing topicdp needs no gensim).
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
    """The non-private gensim LDA of ``corpus`` in canonical order, float64 (what ``gensim-lda`` returns).

    The same matrix as ``topicdp.adapters.GensimLDA(n_topics, random_state, **params).fit_topic_word(corpus)``
    (:data:`GENSIM_LDA_DEFAULTS` overridden by ``params``), for code below the adapters.

    Parameters
    ----------
    corpus : topicdp.Corpus
    n_topics : int
        At most the vocabulary size.
    random_state : int, default=0
    **params
        gensim ``LdaModel`` keyword arguments, e.g. ``passes=5``.

    Returns
    -------
    (n_topics, V) float64 array, rows on the simplex, in canonical order
    """
    if n_topics > corpus.n_words:
        raise ValueError(f"n_topics must be at most the vocabulary size ({corpus.n_words}), got {n_topics}")
    W = np.asarray(fit_gensim_lda(corpus, n_topics, random_state, **{**GENSIM_LDA_DEFAULTS, **params}),
                   dtype=np.float64)
    if not np.all(np.isfinite(W)):
        raise ValueError("model 'gensim-lda' returned non-finite values (NaN or inf)")
    return np.ascontiguousarray(W[canonical_order(W)])
