"""The non-private variational EM (:class:`topicdp.variational.VariationalLDA`) as a model spec for the agnostic road.

A *stable* f for sensitivity sampling: a fixed number of full-batch EM iterations from fixed starting topics
(random with a fixed seed, or public topics such as :func:`topicdp.variational.public_init`), on per-unit
weighted statistics, so each unit moves the output by about its share of the weighted mass (O(1/n)). LDA fit
to convergence from random starts instead jumps between local optima, which makes its sampled sensitivity
large (TopicDP over gensim LDA on blog text).
"""

from __future__ import annotations

import numpy as np

from .base import TopicModelSpec


class VariationalModel(TopicModelSpec):
    """f(D) = :class:`~topicdp.variational.VariationalLDA` (registry name ``"vem"``).

    Parameters
    ----------
    n_topics, random_state : int
    **params
        Any parameter of :class:`~topicdp.variational.VariationalLDA`; this spec's defaults differ in two:
        ``unit="user"`` (per-unit weighting of the statistics: the privacy unit of the release) and
        ``n_iterations=10``. ``init`` ((K, V) array or None) is the public start: with it the output keeps
        init's row order (row k is the topic EM grew from starting topic k, a deterministic function of the
        data and the public start, and unlike the canonical order by top-word indices it does not flip when
        two of a topic's top words swap ranks).
    """

    name = "vem"
    start_param = "init"
    native = "topicdp.variational:VariationalLDA"

    def _fit(self, corpus) -> np.ndarray:
        from ..variational import VariationalLDA

        params = {"unit": "user", "n_iterations": 10, **self.params}
        return VariationalLDA(self.n_topics, random_state=self.random_state, **params).fit(corpus).topic_word_

    def stability(self) -> tuple[bool | None, str]:
        if self.params.get("init") is not None:
            return True, "a fixed number of full-batch EM iterations from public starting topics"
        return False, ("its topics start at random draws (seeded), and EM from random starts lands in different "
                       "local optima for some neighbouring corpora: pass public starting topics (init)")
