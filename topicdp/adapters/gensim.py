"""Adapters for gensim's topic models: LDA (single and multi-core), HDP and LSI.

Every adapter builds the gensim model from the corpus' own vocabulary (ids = column indices), fixes the
model's seed and returns a K x V matrix; :class:`~topicdp.adapters.base.TopicModelSpec` puts it in
canonical order.
"""

from __future__ import annotations

import numpy as np

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, Options, StrOptions

from ..topics import GENSIM_LDA_DEFAULTS, fit_gensim_lda
from ..inference.estep import user_norm_weights
from .base import N_TOPICS, SEED, TopicModelSpec, variational_lda_stability

# gensim logs every pass at INFO; that reaches no one unless the application configures logging, and the
# application's choice is not ours to change (no setLevel on other libraries' loggers here)


#: what ``learning="batch"`` sets on gensim ``LdaModel`` (each may be overridden by a keyword parameter)
GENSIM_BATCH: dict = {"update_every": 0, "decay": 0.0, "passes": 2, "iterations": 50, "gamma_threshold": 0.001,
                      "eval_every": None, "alpha": "symmetric", "dtype": np.float64}

#: gensim's names for what the adapters set themselves
GENSIM_REFUSED = {**TopicModelSpec.refused, "num_topics": "the number of topics is n_topics",
                  "corpus": "the corpus is what fit is given",
                  "id2word": "the words are the corpus' vocabulary (an id2word built from private texts is private)"}


class GensimLDA(TopicModelSpec):
    """gensim ``LdaModel`` (variational Bayes LDA, Hoffman, Blei & Bach 2010) as f: Corpus -> K x V.

    Rows are ``get_topics()``, the normalised variational topic-word parameters lambda, on the simplex.

    Parameters
    ----------
    n_topics : int, default=10
        ``num_topics`` of ``LdaModel`` (gensim's name is refused here, naming this one).
    random_state : int, default=0
        The seed of ``LdaModel`` (an int: f must be deterministic).
    init : (K, V) array or None, default=None
        Public starting topics (e.g. :func:`topicdp.forecast.public_init` on the reference P): lambda starts at
        ``init`` scaled to gensim's own starting mass (V per topic) instead of ``random_state``'s Gamma(100, 1/100)
        draws (:func:`topicdp.topics.fit_gensim_lda`). Row k of the result grew from row k of ``init`` and the
        output keeps that order (unlike the canonical order by top-word indices it does not flip when two top words
        swap ranks).
    learning : {"online", "batch"} or None, default=None
        None: ``"batch"`` with ``init``, ``"online"`` without.

        ``"online"``: gensim's defaults (here ``passes=1``, ``chunksize=2000``, ``update_every=1``, ``iterations=50``,
        ``alpha="symmetric"``, float32): an M-step after every chunk of 2,000 documents, blended with learning rate
        rho_t = (1 + pass + t)^-0.5. Removing one unit shifts every later chunk boundary, so the sequence of updates
        changes with it.

        ``"batch"``: the *stable f* (with ``init``): :data:`GENSIM_BATCH` — ``update_every=0`` and one chunk of all
        documents (``chunksize`` = the number of documents), so each pass is one E-step over the whole corpus followed
        by one M-step; ``decay=0`` makes gensim's rho equal to 1, so the M-step is lambda = eta + sum_d n_dw phi_dwk
        (batch variational Bayes, Hoffman et al. 2010, Algorithm 1; Blei, Ng & Jordan 2003), no blend with the
        previous lambda; a fixed ``passes=2`` (below); per document at most ``iterations=50`` coordinate-ascent steps,
        stopping early when the mean change of gamma_d is below ``gamma_threshold=0.001`` (a deterministic rule of
        the document and the current topics); float64; no perplexity evaluation (``eval_every=None``, which would
        run extra E-steps).
    document_start : {"random", "constant"} or None, default=None
        None: ``"constant"`` with ``learning="batch"``, ``"random"`` with ``"online"``. ``"random"``: gensim's
        start of gamma_d, Gamma(100, 1/100) draws in corpus order, so a document's start depends on its position.
        ``"constant"``: gamma_d starts at 1 (the draws' mean) for every document
        (:func:`topicdp.topics.constant_start_lda_class`).
    chunksize : int >= 1 or None, default=None
        None: 2,000 (gensim's) with online learning, all the documents with batch learning.
    passes : int >= 0 or None, default=None
        None: 1 (gensim's) online, 2 batch (below, "Why 2 passes").
    update_every : int >= 0 or None, default=None
        None: gensim's 1 online, 0 batch.
    decay : float in [0, 1] or None, default=None
        None: gensim's 0.5 online, 0 batch.
    eval_every : int >= 0 or None, default=None
        None: gensim's 10 online, no perplexity evaluation batch (0 turns it off with either).
    dtype : {numpy.float16, numpy.float32, numpy.float64} or None, default=None
        None: gensim's float32 online, float64 batch.
    alpha : {"symmetric", "asymmetric", "auto"}, float > 0 or (K,) array, default="symmetric"
    eta : {"symmetric", "auto"}, float > 0, array or None, default=None
        None: 1 / K, gensim's.
    offset : float > 0, default=1.0
    iterations : int >= 1, default=50
    gamma_threshold : float >= 0, default=0.001
    minimum_probability : float in [0, 1], default=0.01
    max_user_norm : float > 0 or None, default=None
        None: every token weighs 1, as in gensim. A number: in the M-step's statistic every document of a user whose
        summed word counts a_u have ||a_u||_2 > ``max_user_norm`` is weighted by ``max_user_norm / ||a_u||_2``, and
        each user's part of each topic's row is capped in proportion to the row's share of the mass (the documents'
        E-steps are gensim's, unchanged; batch learning from ``init`` only):
        :class:`~topicdp.adapters.SklearnLDA`'s parameter of the same name, and why.
        The remaining parameters are ``LdaModel``'s, with its defaults and meanings (see its documentation). Not
        taken: ``corpus`` and ``id2word`` (the corpus fit is given, with its own vocabulary), ``distributed``,
        ``ns_conf`` and ``callbacks`` (a cluster or hooks would make f depend on more than the corpus), and
        ``per_word_topics`` and ``minimum_phi_value`` (they shape inference's output, not the topics).

    Notes
    -----
    With ``init``, batch learning and the constant document start, f(D) is: lambda^(0) = V init_k / sum(init_k);
    then ``passes`` times: for every document d, gamma_d from the constant start by gensim's coordinate ascent given
    exp E[log beta] of the current lambda; lambda_kw = eta + sum_d n_dw phi_dwk; f(D)_k = lambda_k / sum(lambda_k).
    Every document is treated alike whatever its position, so removing a unit changes the first pass's statistics by
    exactly that unit's own phi-weighted counts (up to floating-point summation order), and later passes by how the
    topics that moved change the other documents' E-steps.

    *Why 2 passes.* On blogs (user level, Lambert-W sizing at gamma 0.2: the largest of 61 sampled pair distances)
    the sampled sensitivity was 0.0037 after 10 passes, 0.0025 after 5, 0.0021 after 3 and 0.0018 after 2; over
    nine noise draws at epsilon 3 the release's NPMI was 0.80x a non-private LDA's after 3 passes (4 draws below
    0.8x) and 0.84x to 0.91x after 2 (``benchmarks/utility/stable_starts.py --param passes=N --draws 9``). A likely
    reason (not measured apart): every pass carries a change in the data further through the other documents' E-steps,
    while topics fitted on a public corpus of the same kind start near the private optimum, so later passes add
    more sensitivity than fit. The cost is a small private theme: planted in 2% of the users and absent from the
    public corpus, 4 of its 10 words reach one topic's top 10 after 2 noiseless passes, 6 after 3, 8 after 10
    (``benchmarks/utility/planted_theme.py``; at epsilon 3 the noise leaves 2 whatever the passes). The count was chosen
    on this corpus; on Enron (exchangeable sizing) the sensitivity also grows with the passes. From a random start
    (``learning="batch"`` without ``init``) 2 passes are too few: pass ``passes``.

    Without ``init`` the topics start at random draws (fixed
    seed, deterministic, but neighbouring corpora can end in different local optima); :meth:`stability` says which
    configuration is expected to be stable.
    """

    name = "gensim-lda"
    start_param = "init"
    refused = GENSIM_REFUSED
    _parameter_constraints = {
        "n_topics": N_TOPICS,
        "random_state": SEED,
        "init": ["array-like", None],
        "learning": [StrOptions({"online", "batch"}), None],
        "document_start": [StrOptions({"random", "constant"}), None],
        "chunksize": [Interval(Integral, 1, None, closed="left"), None],
        "passes": [Interval(Integral, 0, None, closed="left"), None],
        "update_every": [Interval(Integral, 0, None, closed="left"), None],
        "decay": [Interval(Real, 0, 1, closed="both"), None],
        "eval_every": [Interval(Integral, 0, None, closed="left"), None],
        "dtype": [Options(type, {np.float16, np.float32, np.float64}), None],
        "alpha": [StrOptions({"symmetric", "asymmetric", "auto"}), Interval(Real, 0, None, closed="neither"),
                  "array-like"],
        "eta": [StrOptions({"symmetric", "auto"}), Interval(Real, 0, None, closed="neither"), "array-like", None],
        "offset": [Interval(Real, 0, None, closed="neither")],
        "iterations": [Interval(Integral, 1, None, closed="left")],
        "max_user_norm": [Interval(Real, 0, None, closed="neither"), None],
        "gamma_threshold": [Interval(Real, 0, None, closed="left")],
        "minimum_probability": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, init=None, learning: str | None = None,
                 document_start: str | None = None, chunksize: int | None = None, passes: int | None = None,
                 update_every: int | None = None, decay: float | None = None, eval_every: int | None = None,
                 dtype: type | None = None, alpha="symmetric", eta=None, offset: float = 1.0, iterations: int = 50,
                 gamma_threshold: float = 0.001, minimum_probability: float = 0.01,
                 max_user_norm: float | None = None) -> None:
        self.n_topics = n_topics
        self.random_state = random_state
        self.init = init
        self.learning = learning
        self.document_start = document_start
        self.chunksize = chunksize
        self.passes = passes
        self.update_every = update_every
        self.decay = decay
        self.eval_every = eval_every
        self.dtype = dtype
        self.alpha = alpha
        self.eta = eta
        self.offset = offset
        self.iterations = iterations
        self.gamma_threshold = gamma_threshold
        self.minimum_probability = minimum_probability
        self.max_user_norm = max_user_norm

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

    def _model_class(self):
        from gensim.models import LdaModel

        return LdaModel

    def _fit(self, corpus) -> np.ndarray:
        params = dict(self.params)
        learning = params.pop("learning")
        if learning == "batch" and "chunksize" not in params:
            params["chunksize"] = max(1, corpus.n_docs)  # one chunk: one E-step over all documents per pass
        cap = params.pop("max_user_norm", None)
        if cap is not None:
            params["doc_weights"] = user_norm_weights(corpus, cap)
            params["max_user_norm"] = cap
        return fit_gensim_lda(corpus, self.n_topics, self.random_state, model_class=self._model_class(), **params)

    def stability(self) -> tuple[bool | None, str]:
        params = self.params
        return variational_lda_stability(
            params, batch=params["learning"] == "batch", order="corpus order", repeats="passes",
            online_reason="online learning: an M-step every chunk of documents, so removing a unit shifts every "
                          "later chunk boundary (learning='batch')")


class GensimLDAMulticore(GensimLDA):
    """gensim ``LdaMulticore`` (``workers=1`` by default), online learning only.

    With more than one worker, the order in which workers' updates are merged depends on timing, so the
    output is *not* a deterministic function of the data and sensitivity sampling over it is not
    meaningful; the adapter refuses ``workers > 1`` for that reason. Parallelise over neighbour pairs
    instead (``n_jobs`` of :class:`~topicdp.TopicDP`). ``LdaMulticore`` has no ``update_every`` and its E-steps
    run in worker processes with gensim's random document start, so ``learning="batch"`` and
    ``document_start="constant"`` are refused: the stable configuration is ``gensim-lda`` with ``init``.

    Parameters
    ----------
    n_topics, random_state, init, chunksize, passes, decay, eval_every, dtype, alpha, eta, offset, iterations, \
gamma_threshold, minimum_probability
        As :class:`GensimLDA`'s with online learning (``LdaMulticore`` takes no ``update_every``).
    learning : {"online"} or None, default=None
        Only online learning (None is online).
    document_start : {"random"} or None, default=None
        Only gensim's random start (None is random).
    workers : int, default=1
        Must be 1 (above).
    """

    name = "gensim-lda-multicore"
    _parameter_constraints = {**{k: v for k, v in GensimLDA._parameter_constraints.items()
                                 if k not in ("update_every", "max_user_norm")},
                              "workers": [Interval(Integral, 1, None, closed="left")]}

    # GensimLDA's parameters but update_every (LdaMulticore has none), and workers
    def __init__(self, n_topics: int = 10, random_state: int = 0, *, init=None,
                 learning: str | None = None, document_start: str | None = None, chunksize: int | None = None,
                 passes: int | None = None, decay: float | None = None, eval_every: int | None = None,
                 dtype: type | None = None, alpha="symmetric", eta=None, offset: float = 1.0, iterations: int = 50,
                 gamma_threshold: float = 0.001, minimum_probability: float = 0.01, workers: int = 1) -> None:
        self.n_topics = n_topics
        self.random_state = random_state
        self.init = init
        self.learning = learning
        self.document_start = document_start
        self.chunksize = chunksize
        self.passes = passes
        self.decay = decay
        self.eval_every = eval_every
        self.dtype = dtype
        self.alpha = alpha
        self.eta = eta
        self.offset = offset
        self.iterations = iterations
        self.gamma_threshold = gamma_threshold
        self.minimum_probability = minimum_probability
        self.workers = workers

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

    def _model_class(self):
        from gensim.models import LdaMulticore

        return LdaMulticore


class GensimHDP(TopicModelSpec):
    """gensim ``HdpModel`` (online HDP, Wang et al. 2011), truncated deterministically to K topics.

    HDP infers its own number of topics up to the truncation level ``T`` (default 150). The K topics
    kept are those with the largest expected stick-breaking weights (the ``alpha`` of ``hdp_to_lda()``),
    ties broken by topic index; their rows are ``get_topics()`` (normalised lambda), on the simplex.

    Parameters
    ----------
    n_topics : int, default=10
        K of the output (gensim's ``num_topics`` is refused here, naming this one); at most ``T``.
    random_state : int, default=0
        The seed of ``HdpModel`` (an int: f must be deterministic).
    T : int >= n_topics, default=150
        Top-level truncation: the most topics HDP can use.
    K : int, default=15
        Second-level truncation (topics per document), gensim's ``K`` (not the output's K, ``n_topics``).
    max_chunks : int or None, default=None
    chunksize : int, default=256
    kappa, tau : float, default=1.0, 64.0
        The learning rate (t + tau)^-kappa.
    alpha, gamma, eta, scale : float, default=1, 1, 0.01, 1.0
    var_converge : float, default=0.0001
        ``HdpModel``'s parameters, with its defaults and meanings (see its documentation). Not taken: ``max_time``
        (a time limit would make f depend on the machine's speed) and ``outputdir`` (no files are written).
    """

    name = "gensim-hdp"
    refused = GENSIM_REFUSED
    _parameter_constraints = {
        "n_topics": N_TOPICS,
        "random_state": SEED,
        "T": [Interval(Integral, 1, None, closed="left")],
        "K": [Interval(Integral, 1, None, closed="left")],
        "max_chunks": [Interval(Integral, 1, None, closed="left"), None],
        "chunksize": [Interval(Integral, 1, None, closed="left")],
        "kappa": [Interval(Real, 0, None, closed="neither")],
        "tau": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "eta": [Interval(Real, 0, None, closed="neither")],
        "scale": [Interval(Real, 0, None, closed="neither")],
        "var_converge": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, T: int = 150, K: int = 15,
                 max_chunks: int | None = None, chunksize: int = 256, kappa: float = 1.0, tau: float = 64.0,
                 alpha: float = 1, gamma: float = 1, eta: float = 0.01, scale: float = 1.0,
                 var_converge: float = 0.0001) -> None:
        self.n_topics = n_topics
        self.random_state = random_state
        self.T = T
        self.K = K
        self.max_chunks = max_chunks
        self.chunksize = chunksize
        self.kappa = kappa
        self.tau = tau
        self.alpha = alpha
        self.gamma = gamma
        self.eta = eta
        self.scale = scale
        self.var_converge = var_converge

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
    """gensim ``LsiModel`` (truncated SVD of the term-document matrix).

    LSI loadings are signed and each topic's sign is arbitrary (u and -u span the same direction). The
    keyword weight of word w in topic j is the *squared* loading u_{wj}^2: it is invariant to the sign
    flip, and since the left singular vectors have unit norm the weights of a topic sum to 1, so the
    rows are on the simplex like a probabilistic model's and the same post-processing applies.

    Parameters
    ----------
    n_topics : int, default=10
        ``num_topics`` (refused here, naming this one).
    random_state : int, default=0
        ``random_seed`` of ``LsiModel`` (an int: f must be deterministic).
    chunksize : int, default=20000
    decay : float in [0, 1], default=1.0
    onepass : bool, default=True
    power_iters : int, default=2
    extra_samples : int, default=100
    dtype : {numpy.float16, numpy.float32, numpy.float64}, default=numpy.float64
        ``LsiModel``'s parameters, with its defaults and meanings (see its documentation); ``distributed`` is not
        taken (a cluster would make f depend on more than the corpus).
    """

    name = "gensim-lsi"
    refused = {**GENSIM_REFUSED, "random_seed": "the seed is random_state"}
    _parameter_constraints = {
        "n_topics": N_TOPICS,
        "random_state": SEED,
        "chunksize": [Interval(Integral, 1, None, closed="left")],
        "decay": [Interval(Real, 0, 1, closed="both")],
        "onepass": ["boolean"],
        "power_iters": [Interval(Integral, 0, None, closed="left")],
        "extra_samples": [Interval(Integral, 0, None, closed="left")],
        "dtype": [Options(type, {np.float16, np.float32, np.float64})],
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, chunksize: int = 20000, decay: float = 1.0,
                 onepass: bool = True, power_iters: int = 2, extra_samples: int = 100,
                 dtype: type = np.float64) -> None:
        self.n_topics = n_topics
        self.random_state = random_state
        self.chunksize = chunksize
        self.decay = decay
        self.onepass = onepass
        self.power_iters = power_iters
        self.extra_samples = extra_samples
        self.dtype = dtype

    def stability(self) -> tuple[bool | None, str]:
        # measured on blog posts at the Lambert-W sizing: the largest of 61 pair distances 1.84 (of their first 9, 0.31)
        return False, ("continuous in the data only while the first K+1 singular values are separated (a cluster of "
                       "close singular values has no canonical basis: its vectors rotate, and the squared loadings "
                       "with them; measured on blog posts); and with more documents than chunksize (20,000) gensim "
                       "merges per-chunk SVDs truncated to K, so chunk boundaries matter")

    def _fit(self, corpus) -> np.ndarray:
        from gensim.models import LsiModel

        dictionary, bow = corpus.to_gensim()
        model = LsiModel(bow, id2word=dictionary, num_topics=self.n_topics, random_seed=self.random_state,
                         **self.params)
        loadings = model.get_topics()  # (K', V) rows = left singular vectors
        weights = loadings[: self.n_topics] ** 2
        if weights.shape[0] < self.n_topics:
            # fewer non-zero singular values than topics (e.g. fewer documents than topics, a private fact): the
            # missing topics are the uniform rows, the squared loadings of the unit vector 1/sqrt(V), so that f is
            # defined on every corpus and the release does not stop on the one corpus and not on its neighbour
            uniform = np.full((self.n_topics - weights.shape[0], corpus.n_words), 1.0 / corpus.n_words)
            weights = np.vstack([weights, uniform])
        return weights / weights.sum(axis=1, keepdims=True)
