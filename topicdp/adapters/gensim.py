"""Adapters for gensim's LDA (single and multi-core), HDP and LSI, on the corpus' vocabulary with a fixed seed."""

from __future__ import annotations

import numpy as np

from sklearn.utils._param_validation import Options, StrOptions

from ..topics import GENSIM_LDA_DEFAULTS, fit_gensim_lda
from ..inference.estep import user_norm_weights
from .._validation import store_init
from .base import COUNT, NON_NEGATIVE, POSITIVE, POSITIVE_INT, UNIT_INTERVAL, TopicModelSpec, variational_lda_stability

#: what ``learning="batch"`` sets on gensim ``LdaModel`` (each may be overridden by a keyword parameter)
GENSIM_BATCH: dict = {"update_every": 0, "decay": 0.0, "passes": 2, "iterations": 50, "gamma_threshold": 0.001,
                      "eval_every": None, "alpha": "symmetric", "dtype": np.float64}

#: gensim's names for what the adapters set themselves
GENSIM_REFUSED = {**TopicModelSpec.refused, "num_topics": "the number of topics is n_topics",
                  "corpus": "the corpus is what fit is given",
                  "id2word": "the words are the corpus' vocabulary (an id2word built from private texts is private)"}
FLOAT_DTYPE = [Options(type, {np.float16, np.float32, np.float64})]


class GensimLDA(TopicModelSpec):
    """gensim ``LdaModel`` (variational Bayes LDA, Hoffman, Blei & Bach 2010) as f: Corpus -> K x V (``get_topics()``).

    Parameters
    ----------
    n_topics, random_state : int, default=10, 0
        ``num_topics`` (refused under gensim's name) and the seed.
    init : (K, V) array or None, default=None
        Public starting topics (e.g. :func:`topicdp.forecast.public_init`): lambda starts at ``init`` scaled to
        gensim's starting mass (:func:`topicdp.topics.fit_gensim_lda`); row k of f grew from row k of ``init``.
    learning : {"online", "batch"} or None, default=None
        None: ``"batch"`` with ``init``, else ``"online"``, gensim's (an M-step after every chunk, so removing a unit
        shifts every later chunk boundary). ``"batch"`` (:data:`GENSIM_BATCH`): one chunk of all documents and
        ``decay=0``, so each pass is one E-step and the M-step ``lambda = eta + sum_d n_dw phi_dwk`` (Hoffman et al.
        2010, Alg. 1); 2 passes, float64, no perplexity evaluation.
    document_start : {"random", "constant"} or None, default=None
        None: ``"constant"`` with batch learning, else ``"random"``, gensim's Gamma(100, 1/100) in corpus order (a
        document's start depends on its position); ``"constant"`` starts every gamma_d at 1.
    chunksize, passes, update_every, decay, eval_every, dtype : optional
        None: gensim's defaults online, :data:`GENSIM_BATCH`'s batch.
    max_user_norm : float > 0 or None, default=None
        As :class:`~topicdp.adapters.SklearnLDA`'s (batch learning from ``init`` with the constant start only).
    alpha, eta, offset, iterations, gamma_threshold, minimum_probability
        ``LdaModel``'s. Not taken: ``corpus``, ``id2word`` (the corpus fit is given), ``distributed``, ``ns_conf``,
        ``callbacks`` (f would depend on more than the corpus), ``per_word_topics``, ``minimum_phi_value``.

    Notes
    -----
    With ``init``, batch learning and the constant start, removing a unit changes the first pass's statistics by
    exactly its own phi-weighted counts, and each later pass carries the change further through the other
    documents' E-steps: hence 2 passes from public topics.
    """

    name = "gensim-lda"
    gensim_class = "LdaModel"  # of gensim.models
    start_param = "init"
    refused = GENSIM_REFUSED
    _parameter_constraints = {
        **TopicModelSpec._parameter_constraints,
        "init": ["array-like", None],
        "learning": [StrOptions({"online", "batch"}), None],
        "document_start": [StrOptions({"random", "constant"}), None],
        "chunksize": [*POSITIVE_INT, None],
        **dict.fromkeys(("passes", "update_every", "eval_every"), [*COUNT, None]),
        "decay": [*UNIT_INTERVAL, None],
        "dtype": [*FLOAT_DTYPE, None],
        "alpha": [StrOptions({"symmetric", "asymmetric", "auto"}), *POSITIVE, "array-like"],
        "eta": [StrOptions({"symmetric", "auto"}), *POSITIVE, "array-like", None],
        "offset": POSITIVE,
        "iterations": POSITIVE_INT,
        "max_user_norm": [*POSITIVE, None],
        "gamma_threshold": NON_NEGATIVE,
        "minimum_probability": UNIT_INTERVAL,
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, init=None, learning: str | None = None,
                 document_start: str | None = None, chunksize: int | None = None, passes: int | None = None,
                 update_every: int | None = None, decay: float | None = None, eval_every: int | None = None,
                 dtype: type | None = None, alpha="symmetric", eta=None, offset: float = 1.0, iterations: int = 50,
                 gamma_threshold: float = 0.001, minimum_probability: float = 0.01,
                 max_user_norm: float | None = None) -> None:
        store_init(self, locals())

    def _resolve(self, params: dict) -> dict:
        learning = params.pop("learning") or ("batch" if params["init"] is not None else "online")
        start = params.pop("document_start") or ("constant" if learning == "batch" else "random")
        if params.get("max_user_norm") is not None and (learning != "batch" or start != "constant"
                                                          or params["init"] is None):
            raise ValueError("max_user_norm weighs each user's documents in one batch statistic: it needs "
                             "learning='batch', document_start='constant' and public starting topics (init)")
        base = GENSIM_BATCH if learning == "batch" else GENSIM_LDA_DEFAULTS
        # a None is the learning's default: GENSIM_BATCH's, or gensim's own (left out, so gensim applies it)
        given = {k: v for k, v in params.items() if v is not None}
        return {**base, **given, "learning": learning, "document_start": start}

    def _fit(self, corpus) -> np.ndarray:
        import gensim.models

        params = dict(self.params)
        learning = params.pop("learning")
        if learning == "batch" and "chunksize" not in params:
            params["chunksize"] = max(1, corpus.n_docs)  # one chunk: one E-step over all documents per pass
        cap = params.pop("max_user_norm", None)
        if cap is not None:
            params["doc_weights"] = user_norm_weights(corpus, cap)
            params["max_user_norm"] = cap
        model_class = getattr(gensim.models, self.gensim_class)
        return fit_gensim_lda(corpus, self.n_topics, self.random_state, model_class=model_class, **params)

    def stability(self) -> tuple[bool | None, str]:
        return variational_lda_stability(self.params, learning="learning", step="chunk of documents", chunk="chunk",
                                         order="corpus order", repeats="passes")


class GensimLDAMulticore(GensimLDA):
    """gensim ``LdaMulticore``, online learning and ``workers=1`` only (several workers merge their updates in timing
    order: not deterministic). It has no ``update_every`` and uses gensim's random start, so batch learning and the
    constant start are refused: the stable configuration is ``gensim-lda`` with ``init``.

    Parameters
    ----------
    n_topics, random_state, init, chunksize, passes, decay, eval_every, dtype, alpha, eta, offset, iterations, \
    gamma_threshold, minimum_probability
        As :class:`GensimLDA`'s with online learning.
    learning, document_start : {"online"}, {"random"} or None
        Only online learning and gensim's random start.
    workers : int, default=1
        Must be 1.
    """

    name = "gensim-lda-multicore"
    gensim_class = "LdaMulticore"
    _parameter_constraints = {**{k: v for k, v in GensimLDA._parameter_constraints.items()
                                 if k not in ("update_every", "max_user_norm")},
                              "workers": POSITIVE_INT}

    # GensimLDA's parameters but update_every (LdaMulticore has none), and workers
    def __init__(self, n_topics: int = 10, random_state: int = 0, *, init=None,
                 learning: str | None = None, document_start: str | None = None, chunksize: int | None = None,
                 passes: int | None = None, decay: float | None = None, eval_every: int | None = None,
                 dtype: type | None = None, alpha="symmetric", eta=None, offset: float = 1.0, iterations: int = 50,
                 gamma_threshold: float = 0.001, minimum_probability: float = 0.01, workers: int = 1) -> None:
        store_init(self, locals())

    def _resolve(self, params: dict) -> dict:
        if params["learning"] not in (None, "online") or params["document_start"] not in (None, "random"):
            raise ValueError("learning must be 'online' and document_start 'random' for gensim-lda-multicore; "
                             "the batch configuration with a constant document start is gensim-lda's")
        if params["workers"] != 1:
            raise ValueError(
                "workers must be 1: with several workers LdaMulticore is not a deterministic function of the "
                "data, which sensitivity sampling requires; use n_jobs to run neighbour pairs in parallel"
            )
        return super()._resolve({**params, "learning": "online", "document_start": "random"})


class GensimHDP(TopicModelSpec):
    """gensim ``HdpModel`` (online HDP, Wang et al. 2011), truncated to the K topics of largest expected stick-breaking
    weight (``hdp_to_lda()``'s alpha; ties by index).

    Parameters
    ----------
    n_topics, random_state : int, default=10, 0
        K of the output (at most ``T``; gensim's ``num_topics`` is refused) and the seed.
    T, K : int, default=150, 15
        gensim's top-level truncation (the most topics HDP can use) and its topics per document.
    max_chunks, chunksize, kappa, tau, alpha, gamma, eta, scale, var_converge
        ``HdpModel``'s, with its defaults. Not taken: ``max_time`` (f would depend on the machine's speed) and
        ``outputdir``.
    """

    name = "gensim-hdp"
    refused = GENSIM_REFUSED
    _parameter_constraints = {
        **TopicModelSpec._parameter_constraints,
        **dict.fromkeys(("T", "K", "chunksize"), POSITIVE_INT),
        "max_chunks": [*POSITIVE_INT, None],
        **dict.fromkeys(("kappa", "alpha", "gamma", "eta", "scale"), POSITIVE),
        **dict.fromkeys(("tau", "var_converge"), NON_NEGATIVE),
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, T: int = 150, K: int = 15,
                 max_chunks: int | None = None, chunksize: int = 256, kappa: float = 1.0, tau: float = 64.0,
                 alpha: float = 1, gamma: float = 1, eta: float = 0.01, scale: float = 1.0,
                 var_converge: float = 0.0001) -> None:
        store_init(self, locals())

    def _resolve(self, params: dict) -> dict:
        if params["T"] < self.n_topics:
            raise ValueError(f"T (HDP truncation) must be at least n_topics={self.n_topics}, got {params['T']}")
        return params

    def stability(self) -> tuple[bool | None, str]:
        return False, ("online HDP: an update every chunk of 256 documents from random topics (seeded), so removing a "
                       "unit shifts every later chunk; and the K topics kept are those with the largest stick "
                       "weights, a set that changes when two weights cross")

    def _fit(self, corpus) -> np.ndarray:
        from gensim.models import HdpModel

        dictionary, bow = corpus.to_gensim()
        model = HdpModel(bow, id2word=dictionary, random_state=self.random_state, **self.params)
        weights, _ = model.hdp_to_lda()
        keep = np.lexsort((np.arange(weights.size), -np.asarray(weights)))[: self.n_topics]
        topics = model.get_topics()[keep]
        return topics / topics.sum(axis=1, keepdims=True)


class GensimLSI(TopicModelSpec):
    """gensim ``LsiModel`` (truncated SVD of the term-document matrix); word w's weight in topic j is the squared
    loading ``u_wj^2``: sign-free (a topic's sign is arbitrary) and, the singular vectors having unit norm, on the
    simplex.

    Parameters
    ----------
    n_topics, random_state : int, default=10, 0
        ``num_topics`` and ``random_seed`` (refused under gensim's names).
    chunksize, decay, onepass, power_iters, extra_samples, dtype
        ``LsiModel``'s, with its defaults (``dtype`` float64); ``distributed`` is not taken.
    """

    name = "gensim-lsi"
    refused = {**GENSIM_REFUSED, "random_seed": "the seed is random_state"}
    _parameter_constraints = {
        **TopicModelSpec._parameter_constraints,
        "chunksize": POSITIVE_INT,
        "decay": UNIT_INTERVAL,
        "onepass": ["boolean"],
        **dict.fromkeys(("power_iters", "extra_samples"), COUNT),
        "dtype": FLOAT_DTYPE,
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, chunksize: int = 20000, decay: float = 1.0,
                 onepass: bool = True, power_iters: int = 2, extra_samples: int = 100,
                 dtype: type = np.float64) -> None:
        store_init(self, locals())

    def stability(self) -> tuple[bool | None, str]:
        return False, ("continuous in the data only while the first K+1 singular values are separated (a cluster of "
                       "close singular values has no canonical basis: its vectors rotate, and the squared loadings "
                       "with them); and with more documents than chunksize (20,000) gensim "
                       "merges per-chunk SVDs truncated to K, so chunk boundaries matter")

    def _fit(self, corpus) -> np.ndarray:
        from gensim.models import LsiModel

        dictionary, bow = corpus.to_gensim()
        model = LsiModel(bow, id2word=dictionary, num_topics=self.n_topics, random_seed=self.random_state,
                         **self.params)
        loadings = model.get_topics()  # (K', V) rows = left singular vectors
        weights = loadings[: self.n_topics] ** 2
        if weights.shape[0] < self.n_topics:
            # fewer non-zero singular values than topics (how many documents there are is private): the missing
            # topics are the uniform rows (the squared loadings of 1/sqrt(V)), so that f is defined on every corpus
            uniform = np.full((self.n_topics - weights.shape[0], corpus.n_words), 1.0 / corpus.n_words)
            weights = np.vstack([weights, uniform])
        return weights / weights.sum(axis=1, keepdims=True)
