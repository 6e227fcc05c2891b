"""The non-private variational EM (:class:`topicdp.variational.VariationalLDA`) as a model spec for the agnostic road:
a fixed number of full-batch EM iterations from fixed starting topics on per-unit weighted statistics, so each unit
moves the output by about its share of the weighted mass (O(1/n)).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .._validation import store_init
from .base import COUNT, POSITIVE, POSITIVE_INT, TopicModelSpec


class VariationalModel(TopicModelSpec):
    """f(D) = :class:`~topicdp.variational.VariationalLDA` (registry name ``"vem"``).

    Parameters
    ----------
    n_topics, random_state : int, default=10, 0
    unit : {"user", "document"}, default="user"
        Whose counts are weighted to norm 1: the release's privacy unit.
    n_iterations : int >= 1, default=10
        EM passes (``VariationalLDA``'s default is 7).
    init : (K, V) array or None, default=None
        A public start: the output keeps its row order (row k grew from starting topic k).
    alpha, eta, warmup_iterations, warmup_topics, e_step_max_iter, e_step_tol, n_jobs
        ``VariationalLDA``'s, with its defaults; the checks relating two of them are its own, run before any fit.
    """

    name = "vem"
    start_param = "init"
    _parameter_constraints = {
        **TopicModelSpec._parameter_constraints,
        "unit": [StrOptions({"user", "document"})],
        **dict.fromkeys(("n_iterations", "e_step_max_iter", "n_jobs"), POSITIVE_INT),
        "init": ["array-like", None],
        **dict.fromkeys(("alpha", "eta"), [*POSITIVE, None]),
        "warmup_iterations": [*COUNT, StrOptions({"auto"})],
        "warmup_topics": [*POSITIVE_INT, None],
        "e_step_tol": POSITIVE,
    }

    def __init__(self, n_topics: int = 10, random_state: int = 0, *, unit: str = "user", n_iterations: int = 10,
                 init=None, alpha: float | None = None, eta: float | None = None,
                 warmup_iterations: int | str = "auto", warmup_topics: int | None = None, e_step_max_iter: int = 50,
                 e_step_tol: float = 1e-3, n_jobs: int = 1) -> None:
        store_init(self, locals())

    def _estimator(self, params: dict):
        from ..variational import VariationalLDA

        return VariationalLDA(self.n_topics, random_state=self.random_state, **params)

    def _resolve(self, params: dict) -> dict:
        self._estimator(params)._validate()  # the checks between parameters, in VariationalLDA's words
        return params

    def _fit(self, corpus) -> np.ndarray:
        return self._estimator(self.params).fit(corpus).topic_word_

    def stability(self) -> tuple[bool | None, str]:
        if self.params["init"] is not None:
            return True, "a fixed number of full-batch EM iterations from public starting topics"
        return False, ("its topics start at random draws (seeded), and EM from random starts lands in different "
                       "local optima for some neighbouring corpora: pass public starting topics (init)")
