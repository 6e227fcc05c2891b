"""The noiseless variational EM of :mod:`topicdp.variational` as a model spec for the agnostic road.

A *stable* f for sensitivity sampling: a fixed number of full-batch EM iterations from fixed starting topics
(random with a fixed seed, or public topics such as :func:`topicdp.variational.public_init`), on per-unit
weighted statistics, so each unit moves the output by about its share of the weighted mass (O(1/n)). LDA fit
to convergence from random starts instead jumps between local optima, which makes its sampled sensitivity
large (TopicDP over gensim LDA on blog text, issue 9).
"""

from __future__ import annotations

import numpy as np

from .base import TopicModelSpec


class VariationalLDA(TopicModelSpec):
    """f(D) = :class:`~topicdp.variational.DPVariationalLDA` with ``epsilon=None`` (no noise).

    Parameters
    ----------
    n_topics, random_state : int
    unit : {"user", "document"}, default="user"
        Per-unit weighting of the statistics (the privacy unit of the release).
    n_iterations : int, default=10
    init : (K, V) array or None
        Public starting topics. With ``init`` the output keeps init's row order: row k is the topic EM grew
        from starting topic k, a deterministic function of the data and the public start, and unlike the
        canonical order by top-word indices it does not flip when two of a topic's top words swap ranks.
    """

    name = "vem"
    start_param = "init"

    def _fit(self, corpus) -> np.ndarray:
        from ..variational import DPVariationalLDA

        params = {"unit": "user", "n_iterations": 10, **self.params}
        model = DPVariationalLDA(self.n_topics, epsilon=None, random_state=self.random_state, **params)
        return model.fit(corpus).topic_word_

    def stability(self) -> tuple[bool | None, str]:
        if self.params.get("init") is not None:
            return True, "a fixed number of full-batch EM iterations from public starting topics"
        return False, ("its topics start at random draws (seeded), and EM from random starts lands in different "
                       "local optima for some neighbouring corpora: pass public starting topics (init)")

