"""Wrap any user function ``corpus -> (K, V) array`` as a model spec."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .base import N_TOPICS, TopicModelSpec


class CallableModel(TopicModelSpec):
    """A user's topic model as a function of the corpus.

    Parameters
    ----------
    func : callable
        ``func(corpus) -> (n_topics, corpus.n_words) array``; it must be deterministic (fix any seed inside it) or
        sensitivity sampling measures noise. Its output is checked and put in canonical order.
    n_topics : int
    name : str or None, default=None
        A name for reports and the sensitivity cache (None: the function's qualified name); stored as ``_name``
        (``name`` is every spec's registry name) and reported by :meth:`get_params` under ``name``.
    probabilistic : bool, default=True
        Whether rows are probability vectors (post-processing then renormalises them).
    """

    name = "callable"
    _parameter_constraints = {
        "func": [callable],
        "n_topics": N_TOPICS,
        "name": [str, None],
        "probabilistic": ["boolean"],
    }

    def __init__(self, func: Callable, n_topics: int, *, name: str | None = None, probabilistic: bool = True) -> None:
        self.func = func
        self.n_topics = n_topics
        self._name = name
        self.probabilistic = probabilistic

    @property
    def label(self) -> str:
        """The name in reports: ``name``, else the function's qualified name."""
        return str(self._name or getattr(self.func, "__qualname__", repr(self.func)))

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"func": self.func, "n_topics": self.n_topics, "name": self._name, "probabilistic": self.probabilistic}

    def set_params(self, **params: Any) -> "CallableModel":
        if "name" in params:  # stored as _name (see Notes)
            self._name = params.pop("name")
        return super().set_params(**params)

    def _fit(self, corpus) -> np.ndarray:
        return self.func(corpus)

    def describe(self) -> dict:
        expected, reason = self.stability()
        self._validate_params()
        return {"model": "callable", "function": self.label, "n_topics": self.n_topics,
                "stability": {"expected": expected, "reason": reason}}
