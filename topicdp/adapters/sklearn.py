"""Adapters for scikit-learn's ``LatentDirichletAllocation`` and ``NMF``."""

from __future__ import annotations

from functools import lru_cache
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ..inference.estep import statistic_from_gamma, user_norm_weights
from .base import N_TOPICS, SEED, TopicModelSpec, variational_lda_stability


def _normalise_rows(components: np.ndarray) -> np.ndarray:
    """The rows of ``components`` as probability vectors; a topic the fit left all zero (no document supports it,
    e.g. more topics than documents) is the uniform topic, as every topic of a corpus without documents is
    (:meth:`TopicModelSpec.fit_topic_word`). Refusing it instead would make a release stop on the private data (how
    many documents a corpus holds), and a data-independent row keeps f a function of the data whose rows are
    probability vectors, as the global bounds of output perturbation need."""
    sums = components.sum(axis=1, keepdims=True)
    empty = sums[:, 0] <= 0
    if np.any(empty):
        components = components.copy()
        components[empty] = 1.0
        sums = components.sum(axis=1, keepdims=True)
    return components / sums


class SklearnLDA(TopicModelSpec):
    """scikit-learn ``LatentDirichletAllocation`` (batch variational Bayes by default, ``n_jobs=1``).

    Rows are ``components_`` normalised to sum to 1 (the posterior mean topic-word distributions).

    Parameters
    ----------
    n_topics : int, default=10
        ``n_components`` (scikit-learn's name is refused here, naming this one).
    random_state : int, default=0
        The seed of the estimator (an int: f must be deterministic).
    init : (K, V) array or None, default=None
        Public starting topics (e.g. :func:`topicdp.forecast.public_init` on the reference P): ``components_``
        (lambda) starts at ``init`` scaled to scikit-learn's own starting mass (V per topic: its Gamma(100, 1/100)
        draws have mean 1) instead of those draws. Row k of the result grew from row k of ``init`` and the output
        keeps that order.
    document_start : {"random", "constant"} or None, default=None
        None: ``"constant"`` with ``init``, ``"random"`` without. scikit-learn's training E-step
        (``_update_doc_distribution`` called with the estimator's ``random_state_``) starts every document's gamma at
        Gamma(100, 0.01) draws taken in row order, one (n_samples, K) draw per E-step, so a document's start depends
        on its row and on every E-step before. ``"constant"``: gamma_d starts at 1, the start scikit-learn itself uses
        outside training (``transform``, ``random_init=False``).
    max_iter : int >= 0 or None, default=None
        None: 3 with ``init`` (below, "Why 3 iterations"), scikit-learn's 10 without.
    max_user_norm : float > 0 or None, default=None
        None: every token weighs 1, as in scikit-learn. A number c: in the M-step's statistic every document of a
        user whose summed word counts a_u have ||a_u||_2 > c is weighted by c / ||a_u||_2, so no user's counts weigh
        more than that norm; then user u's part S_uk of each topic's row is weighted by min(1, c K pi_k /
        ||S_uk||_2), pi_k the row's share of the statistic's mass, so that no user moves a small topic more than a
        user of norm c moves an average one (the documents' E-steps are unchanged; batch learning only;
        :func:`~topicdp.inference.estep.user_topic_weights`). The first weight depends on the user's own documents
        alone, the second on them and the current topics (below, "Why a weight per user").
    learning_method : {"batch", "online"}, default="batch"
    doc_topic_prior, topic_word_prior : float in [0, 1] or None, default=None
        None: 1 / K, as scikit-learn.
    learning_decay : float in [0, 1], default=0.7
    learning_offset : float >= 1, default=10.0
    batch_size : int > 0, default=128
    evaluate_every : int, default=-1
        -1 (or 0): no perplexity evaluation, so a fixed number of iterations.
    total_samples : float > 0, default=1e6
    perp_tol : float >= 0, default=0.1
    mean_change_tol : float >= 0, default=0.001
    max_doc_update_iter : int >= 0, default=100
    verbose : int, default=0
        The remaining parameters are ``LatentDirichletAllocation``'s, with its defaults and meanings (see its
        documentation); ``n_jobs`` is not one (the fit runs on one job: run neighbour pairs in parallel with
        :class:`~topicdp.TopicDP`'s ``n_jobs``).

    Notes
    -----
    With ``init``, ``learning_method="batch"`` and the constant document start, f(D) is: lambda^(0) = V init_k /
    sum(init_k); then ``max_iter`` times (a fixed number: ``evaluate_every=-1``, so no perplexity stop): for every
    document, gamma_d from 1 by scikit-learn's coordinate ascent (at most ``max_doc_update_iter=100`` steps, stopping
    when the mean change is below ``mean_change_tol=0.001``), then lambda = ``topic_word_prior`` + sum_d n_dw phi_dwk
    (batch variational Bayes, Hoffman, Blei & Bach 2010, Algorithm 1); f(D)_k = lambda_k / sum(lambda_k). Only the
    two starts are changed (a subclass overriding ``_init_latent_vars`` and ``_e_step``'s ``random_init``); the
    update equations are scikit-learn's.

    *Why 3 iterations from public topics*: as for :class:`~topicdp.adapters.GensimLDA`'s 2 passes, later iterations
    add more sensitivity than fit when the start was fitted on a public corpus of the same kind. On blogs (user
    level, Lambert-W sizing at gamma 0.2) ``max_iter=3`` sampled Delta_s 0.0019 and released at epsilon 3 topics with
    NPMI 0.88x, contrast 1.27x a non-private LDA's, diversity 0.76, overlap 0.44
    (``benchmarks/utility/stable_starts.py --models sklearn-lda --param max_iter=3``); 10 iterations were not run at
    that sizing (about 90 s a fit).

    *Why a weight per user*: scikit-learn's LDA weighs a user by their counts, so the neighbouring corpora that move
    f most swap a user with many tokens, or with few words repeated. Over 24 pairs of the sampler on blog posts
    (user level, 20 posts a user) the largest distance, 17.5x the median, swapped a user of 4,634 tokens for one of
    279 (``benchmarks/privacy/sensitivity_tail.py``); the Lambert-W sizing at gamma 0.2 reads the largest of 61 pairs,
    which usually holds such a user. Weighted to at most P's median user's 559 tokens, the largest of 61 pairs fell
    from 0.0053 to 0.00165, but users of few repeated words (blogs of HTML entities: 608-1,592 tokens, norms
    371-862) still moved f 4-5x the median pair, and two samples drew one. Weighting each user's statistic to at
    most P's median user's norm ||a_u||_2 (48 on blogs; the norm the Frobenius distance answers to, and the one the
    toolkit's user-level :class:`~topicdp.variational.VariationalLDA` divides by) brought those swaps to
    0.00066-0.00086, and the three users with the most tokens (6,387-9,070) at 0.00052-0.00064
    (``benchmarks/privacy/sensitivity_tail.py --users 3``). The far pairs left were ordinary users whose change landed
    in one topic (73-91% of the squared distance in one row, against 35% in the median pair): a user's part of row
    k moves the normalised row by about ||S_uk|| / N_k, so a user's norm in a small topic counts more. Capping
    each user's part of each row too brought the largest of the same 24 pairs from 0.00163 to 0.00115, and with
    gensim's LDA the largest of 40 from 0.00356 to 0.00203 (its next five 22-29% lower; the median pair unchanged,
    ``benchmarks/privacy/sensitivity_tail.py --pairs 40 --model gensim --caps weighted``).
    """

    name = "sklearn-lda"
    start_param = "init"
    refused = {**TopicModelSpec.refused,
               "n_jobs": "the fit runs on one job (f must be a deterministic function of the corpus); TopicDP's "
                         "n_jobs runs neighbour pairs in parallel"}
    _parameter_constraints = {
        "n_topics": N_TOPICS,
        "random_state": SEED,
        "init": ["array-like", None],
        "document_start": [StrOptions({"random", "constant"}), None],
        "max_iter": [Interval(Integral, 0, None, closed="left"), None],
        "max_user_norm": [Interval(Real, 0, None, closed="neither"), None],
        # the rest as LatentDirichletAllocation states them
        "learning_method": [StrOptions({"batch", "online"})],
        "doc_topic_prior": [Interval(Real, 0, 1, closed="both"), None],
        "topic_word_prior": [Interval(Real, 0, 1, closed="both"), None],
        "learning_decay": [Interval(Real, 0, 1, closed="both")],
        "learning_offset": [Interval(Real, 1.0, None, closed="left")],
        "batch_size": [Interval(Integral, 0, None, closed="neither")],
        "evaluate_every": [Interval(Integral, None, None, closed="neither")],
        "total_samples": [Interval(Real, 0, None, closed="neither")],
        "perp_tol": [Interval(Real, 0, None, closed="left")],
        "mean_change_tol": [Interval(Real, 0, None, closed="left")],
        "max_doc_update_iter": [Interval(Integral, 0, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, init=None, document_start: str | None = None,
                 max_iter: int | None = None, max_user_norm: float | None = None, learning_method: str = "batch",
                 doc_topic_prior: float | None = None, topic_word_prior: float | None = None,
                 learning_decay: float = 0.7, learning_offset: float = 10.0, batch_size: int = 128, evaluate_every: int = -1, total_samples: float = 1e6,
                 perp_tol: float = 0.1, mean_change_tol: float = 1e-3, max_doc_update_iter: int = 100,
                 verbose: int = 0) -> None:
        self.n_topics = n_topics
        self.random_state = random_state
        self.init = init
        self.document_start = document_start
        self.max_iter = max_iter
        self.max_user_norm = max_user_norm
        self.learning_method = learning_method
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.learning_decay = learning_decay
        self.learning_offset = learning_offset
        self.batch_size = batch_size
        self.evaluate_every = evaluate_every
        self.total_samples = total_samples
        self.perp_tol = perp_tol
        self.mean_change_tol = mean_change_tol
        self.max_doc_update_iter = max_doc_update_iter
        self.verbose = verbose

    def _resolve(self, params: dict) -> dict:
        has_start = params["init"] is not None
        if params["document_start"] is None:
            params["document_start"] = "constant" if has_start else "random"
        if params["max_iter"] is None:
            params["max_iter"] = 3 if has_start else 10
        if params["max_user_norm"] is not None and params["learning_method"] != "batch":
            raise ValueError("max_user_norm weighs each user's documents in one batch statistic: it needs "
                             f"learning_method='batch', got {params['learning_method']!r}")
        return params

    def _fit(self, corpus) -> np.ndarray:
        params = dict(self.params)
        init = params.pop("init")
        constant = params.pop("document_start") == "constant"
        cap = params.pop("max_user_norm")
        if init is not None:
            init = np.asarray(init, dtype=np.float64)
            if init.shape != (self.n_topics, corpus.n_words) or init.min() < 0 or np.any(init.sum(axis=1) <= 0):
                raise ValueError(f"init must be a non-negative ({self.n_topics}, {corpus.n_words}) array with "
                                 "positive rows")
        model = _started_lda_class()(n_components=self.n_topics, random_state=self.random_state, n_jobs=1, **params)
        model.public_start_ = init
        model.constant_document_start_ = constant
        model.row_weights_ = None if cap is None else user_norm_weights(corpus, cap)
        model.row_users_, model.user_cap_ = corpus.doc_users, cap
        model.fit(corpus.X)
        return _normalise_rows(model.components_)

    def stability(self) -> tuple[bool | None, str]:
        params = self.params
        return variational_lda_stability(
            params, batch=params["learning_method"] == "batch", order="row order", repeats="iterations",
            online_reason="online learning: an M-step every mini-batch, so removing a unit shifts every later "
                          "batch boundary (learning_method='batch')")


@lru_cache(maxsize=1)
def _started_lda_class():
    """``LatentDirichletAllocation`` with a public topic start and an optional constant document start.

    The attributes ``public_start_`` ((K, V) or None), ``constant_document_start_`` (bool) and ``row_weights_``
    ((n_docs,) or None: the statistic's document weights, :func:`weighted_statistic`) are set on the instance
    before ``fit``; ``__init__`` is scikit-learn's, so ``get_params`` and the parameter validation are too.
    """
    from scipy.special import psi
    from sklearn.decomposition import LatentDirichletAllocation

    class StartedLDA(LatentDirichletAllocation):
        public_start_ = None  # (K, V) array or None
        constant_document_start_ = False
        row_weights_ = None
        row_users_ = user_cap_ = None

        def _init_latent_vars(self, n_features, dtype=np.float64):
            super()._init_latent_vars(n_features, dtype=dtype)
            if self.public_start_ is not None:
                start = self.public_start_ / self.public_start_.sum(axis=1, keepdims=True) * n_features
                self.components_ = start.astype(dtype, copy=False)
                # exp(E[log beta]) as scikit-learn's _init_latent_vars computes it (its Cython helper is private)
                elog = psi(self.components_) - psi(self.components_.sum(axis=1, keepdims=True))
                self.exp_dirichlet_component_ = np.exp(elog).astype(dtype, copy=False)

        def _e_step(self, X, cal_sstats, random_init, parallel=None):
            random_init = random_init and not self.constant_document_start_
            if not cal_sstats or self.row_weights_ is None:
                return super()._e_step(X, cal_sstats, random_init, parallel=parallel)
            if X.shape[0] != self.row_weights_.size:
                raise ValueError("document weights need batch learning (the statistic of every document at once)")
            doc_topic, _ = super()._e_step(X, False, random_init, parallel=parallel)
            return doc_topic, statistic_from_gamma(X, doc_topic, self.exp_dirichlet_component_, self.row_weights_,
                                                   doc_users=self.row_users_, max_user_norm=self.user_cap_)

    return StartedLDA


class SklearnNMF(TopicModelSpec):
    """scikit-learn ``NMF`` on the count matrix (``init="nndsvda"``, deterministic).

    NMF's H rows are non-negative word weights of arbitrary scale (W absorbs it); each row is divided
    by its sum so that topics are on the simplex and comparable across fits. With ``init_topics`` (public starting
    topics, K x V), H starts there (``init="custom"``), W at its non-negative least-squares fit to the counts
    given H (``non_negative_factorization(update_H=False)``), and row k of the result grew from row k of
    ``init_topics``.

    Parameters
    ----------
    n_topics : int, default=10
        ``n_components`` (scikit-learn's name is refused here, naming this one).
    random_state : int, default=0
        The seed of the estimator (an int: f must be deterministic).
    init_topics : (K, V) array or None, default=None
        Public starting topics (above); with them ``init`` is not used.
    init : {"nndsvda", "nndsvd", "nndsvdar", "random"} or None, default="nndsvda"
        The toolkit's default (scikit-learn's None is ``"nndsvda"`` too for K <= min(n, V), ``"random"`` above):
        a deterministic start stated once. ``"custom"`` is what ``init_topics`` sets.
    max_iter : int >= 1, default=400
        The toolkit's default (scikit-learn's is 200): enough for the coordinate descent to stop by ``tol`` on
        the corpora tested.
    solver : {"cd", "mu"}, default="cd"
    beta_loss : {"frobenius", "kullback-leibler", "itakura-saito"} or float, default="frobenius"
    tol : float >= 0, default=1e-4
    alpha_W : float >= 0, default=0.0
    alpha_H : float >= 0 or "same", default="same"
    l1_ratio : float in [0, 1], default=0.0
    verbose : int, default=0
    shuffle : bool, default=False
        The remaining parameters are ``NMF``'s, with its defaults and meanings (see its documentation).
    """

    name = "sklearn-nmf"
    start_param = "init_topics"
    _parameter_constraints = {
        "n_topics": N_TOPICS,
        "random_state": SEED,
        "init_topics": ["array-like", None],
        # the rest as NMF states them, but "custom" (it needs W and H at fit time: init_topics)
        "init": [StrOptions({"random", "nndsvd", "nndsvda", "nndsvdar"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"cd", "mu"})],
        "beta_loss": [StrOptions({"frobenius", "kullback-leibler", "itakura-saito"}), Real],
        "tol": [Interval(Real, 0, None, closed="left")],
        "alpha_W": [Interval(Real, 0, None, closed="left")],
        "alpha_H": [Interval(Real, 0, None, closed="left"), StrOptions({"same"})],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "verbose": ["verbose"],
        "shuffle": ["boolean"],
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, init_topics=None, init: str | None = "nndsvda",
                 max_iter: int = 400, solver: str = "cd", beta_loss: str | float = "frobenius", tol: float = 1e-4,
                 alpha_W: float = 0.0, alpha_H: float | str = "same", l1_ratio: float = 0.0, verbose: int = 0,
                 shuffle: bool = False) -> None:
        self.n_topics = n_topics
        self.random_state = random_state
        self.init_topics = init_topics
        self.init = init
        self.max_iter = max_iter
        self.solver = solver
        self.beta_loss = beta_loss
        self.tol = tol
        self.alpha_W = alpha_W
        self.alpha_H = alpha_H
        self.l1_ratio = l1_ratio
        self.verbose = verbose
        self.shuffle = shuffle

    def _fit(self, corpus) -> np.ndarray:
        from sklearn.decomposition import NMF, non_negative_factorization

        params = dict(self.params)
        init = params.pop("init_topics")
        X = corpus.X.astype(np.float64)
        if init is None and str(params.get("init")).startswith("nndsvd") and X.shape[0] < self.n_topics:
            # NNDSVD needs at least K rows; documents without tokens change no topic (their rows of W stay 0 and
            # add nothing to the loss), so f is the same NMF on X padded with empty rows, defined on every corpus
            # (a period may hold fewer documents than topics, and how many it holds is private)
            X = sp.vstack([X, sp.csr_matrix((self.n_topics - X.shape[0], X.shape[1]))], format="csr")
        if init is None:
            model = NMF(n_components=self.n_topics, random_state=self.random_state, **params)
            with np.errstate(invalid="ignore"):  # an exact fit (e.g. one document) rounds its loss below 0 in a sqrt
                model.fit(X)
            return _normalise_rows(model.components_)
        H = np.asarray(init, dtype=np.float64)
        if H.shape != (self.n_topics, X.shape[1]) or H.min() < 0:
            raise ValueError(f"init_topics must be a non-negative ({self.n_topics}, {X.shape[1]}) array")
        H = H / H.sum(axis=1, keepdims=True) * float(X.sum()) / self.n_topics  # the counts' scale
        W, _, _ = non_negative_factorization(X, H=H, n_components=self.n_topics, init="custom", update_H=False,
                                             max_iter=params["max_iter"])
        params["init"] = "custom"
        model = NMF(n_components=self.n_topics, random_state=self.random_state, **params)
        with np.errstate(invalid="ignore"):
            model.fit(X, W=np.maximum(W, 1e-10), H=H)
        return _normalise_rows(model.components_)

    def stability(self) -> tuple[bool | None, str]:
        # Measured on blog posts at the Lambert-W sizing (the largest of 61 pair distances): from P's topics 0.055
        # against a 90th percentile of 0.003, and with a fixed number of iterations (tol=0, max_iter=30 or 100)
        # still 0.025 and 0.032, each time from a different pair; from nndsvda 1.24.
        if self.params["init_topics"] is not None:
            return False, ("coordinate descent from public starting topics still moves far for a few neighbouring "
                           "corpora (measured on blog posts; not the stopping rule: a fixed number of iterations "
                           "jumps too); no parameter is known to remove it")
        return False, ("the nndsvda start is an SVD of the data, whose singular vectors can rotate between "
                       "neighbouring corpora where the leading singular values are close; a few neighbouring corpora "
                       "moved it far (measured on blog posts), and no parameter is known to remove it")
