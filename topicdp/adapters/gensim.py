"""Adapters for gensim's topic models: LDA (single and multi-core), HDP and LSI.

Every adapter builds the gensim model from the corpus' own vocabulary (ids = column indices), fixes the
model's seed and returns a K x V matrix; :class:`~topicdp.adapters.base.TopicModelSpec` puts it in
canonical order.
"""

from __future__ import annotations

import numpy as np

from ..topics import GENSIM_LDA_DEFAULTS, fit_gensim_lda
from .base import TopicModelSpec, variational_lda_stability

# gensim logs every pass at INFO; that reaches no one unless the application configures logging, and the
# application's choice is not ours to change (no setLevel on other libraries' loggers here)


#: what ``learning="batch"`` sets on gensim ``LdaModel`` (each may be overridden by a keyword parameter)
GENSIM_BATCH: dict = {"update_every": 0, "decay": 0.0, "passes": 2, "iterations": 50, "gamma_threshold": 0.001,
                      "eval_every": None, "alpha": "symmetric", "dtype": np.float64}


class GensimLDA(TopicModelSpec):
    """gensim ``LdaModel`` (variational Bayes LDA, Hoffman, Blei & Bach 2010) as f: Corpus -> K x V.

    Rows are ``get_topics()``, the normalised variational topic-word parameters lambda, on the simplex.

    Parameters
    ----------
    n_topics, random_state : int
        ``num_topics`` and ``random_state`` of ``LdaModel``.
    init : (K, V) array or None, default=None
        Public starting topics (e.g. :func:`topicdp.variational.public_init` on the reference P): lambda starts at
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
    **params
        Further ``LdaModel`` keyword arguments (they override the defaults above).

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
    0.8x) and 0.84x to 0.91x after 2 (``benchmarks/stable_starts.py --param passes=N --draws 9``). A likely reason
    (not measured apart): every pass carries a change in the data further through the other documents' E-steps,
    while topics fitted on a public corpus of the same kind start near the private optimum, so later passes add
    more sensitivity than fit. The cost is a small private theme: planted in 2% of the users and absent from the
    public corpus, 4 of its 10 words reach one topic's top 10 after 2 noiseless passes, 6 after 3, 8 after 10
    (``benchmarks/planted_theme.py``; at epsilon 3 the noise leaves 2 whatever the passes). The count was chosen
    on this corpus; on Enron (exchangeable sizing) the sensitivity also grows with the passes. From a random start
    (``learning="batch"`` without ``init``) 2 passes are too few: pass ``passes``.

    Without ``init`` the topics start at random draws (fixed
    seed, deterministic, but neighbouring corpora can end in different local optima); :meth:`stability` says which
    configuration is expected to be stable.
    """

    name = "gensim-lda"
    start_param = "init"
    defaults = dict(GENSIM_LDA_DEFAULTS)
    native = "gensim.models:LdaModel"
    own_params = ("init", "learning", "document_start")
    reserved = {"num_topics": "the number of topics is n_topics", "corpus": "the corpus is what fit is given",
                "id2word": "the words are the corpus' vocabulary (an id2word built from private texts is private)"}

    def _resolve(self, params: dict) -> dict:
        learning = params.pop("learning", None)
        if learning is None:
            learning = "batch" if params.get("init") is not None else "online"
        if learning not in ("online", "batch"):
            raise ValueError(f"learning must be 'online', 'batch' or None, got {learning!r}")
        start = params.pop("document_start", None)
        if start is None:
            start = "constant" if learning == "batch" else "random"
        if start not in ("random", "constant"):
            raise ValueError(f"document_start must be 'random', 'constant' or None, got {start!r}")
        base = {k: v for k, v in self.defaults.items() if learning == "online" or k != "chunksize"}
        if learning == "batch":
            base.update(GENSIM_BATCH)
        return {**base, **params, "learning": learning, "document_start": start}

    def _model_class(self):
        from gensim.models import LdaModel

        return LdaModel

    def _fit(self, corpus) -> np.ndarray:
        params = dict(self.params)
        learning = params.pop("learning")
        if learning == "batch" and "chunksize" not in params:
            params["chunksize"] = max(1, corpus.n_docs)  # one chunk: one E-step over all documents per pass
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
    """

    name = "gensim-lda-multicore"
    defaults = {**GensimLDA.defaults, "workers": 1}
    native = "gensim.models:LdaMulticore"

    def _resolve(self, params: dict) -> dict:
        if params.get("learning", "online") != "online" or params.get("document_start", "random") != "random":
            raise ValueError("learning must be 'online' and document_start 'random' for gensim-lda-multicore; "
                             "the batch configuration with a constant document start is gensim-lda's")
        params = super()._resolve({**params, "learning": "online", "document_start": "random"})
        if params["workers"] != 1:
            raise ValueError(
                "workers must be 1: with several workers LdaMulticore is not a deterministic function of the "
                "data, which sensitivity sampling requires; use n_jobs to run neighbour pairs in parallel"
            )
        return params

    def _model_class(self):
        from gensim.models import LdaMulticore

        return LdaMulticore


class GensimHDP(TopicModelSpec):
    """gensim ``HdpModel`` (online HDP, Wang et al. 2011), truncated deterministically to K topics.

    HDP infers its own number of topics up to the truncation level ``T`` (default 150). The K topics
    kept are those with the largest expected stick-breaking weights (the ``alpha`` of ``hdp_to_lda()``),
    ties broken by topic index; their rows are ``get_topics()`` (normalised lambda), on the simplex.
    """

    name = "gensim-hdp"
    defaults = {"T": 150, "K": 15}
    native = "gensim.models:HdpModel"
    reserved = {"num_topics": "the number of topics is n_topics", "corpus": "the corpus is what fit is given",
                "id2word": "the words are the corpus' vocabulary (an id2word built from private texts is private)"}

    def _resolve(self, params: dict) -> dict:
        params = super()._resolve(params)
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
    """

    name = "gensim-lsi"
    defaults = {"power_iters": 2, "extra_samples": 100}
    native = "gensim.models:LsiModel"
    reserved = {"num_topics": "the number of topics is n_topics", "corpus": "the corpus is what fit is given",
                "id2word": "the words are the corpus' vocabulary (an id2word built from private texts is private)"}

    def stability(self) -> tuple[bool | None, str]:
        # measured on blog posts at the Lambert-W sizing: the largest of 61 pair distances 1.84 (of their first 9, 0.31)
        return False, ("continuous in the data only while the first K+1 singular values are separated (a cluster of "
                       "close singular values has no canonical basis: its vectors rotate, and the squared loadings "
                       "with them; measured on blog posts); and with more documents than chunksize (20,000) gensim "
                       "merges per-chunk SVDs truncated to K, so chunk boundaries matter")

    def _fit(self, corpus) -> np.ndarray:
        from gensim.models import LsiModel

        dictionary, bow = corpus.to_gensim()
        model = LsiModel(bow, id2word=dictionary, num_topics=self.n_topics, random_seed=self.random_state, **self.params)
        loadings = model.get_topics()  # (K', V) rows = left singular vectors
        if loadings.shape[0] < self.n_topics:
            raise ValueError(
                f"LSI found only {loadings.shape[0]} non-zero singular values; n_topics={self.n_topics} is too large"
            )
        weights = loadings[: self.n_topics] ** 2
        return weights / weights.sum(axis=1, keepdims=True)
