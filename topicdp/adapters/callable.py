"""Wrap any user function ``corpus -> (K, V) array`` as a model spec."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .base import TopicModelSpec


class CallableModel(TopicModelSpec):
    """A user's topic model as a function of the corpus.

    Parameters
    ----------
    func : callable
        ``func(corpus) -> array of shape (n_topics, corpus.n_words)``. It must be deterministic — fix
        any seed inside it — or sensitivity sampling measures noise instead of sensitivity. Its output
        is checked for shape and finiteness, and put in canonical topic order.
    n_topics : int
    name : str, optional
        A name for reports and the sensitivity cache (default: the function's qualified name).
    probabilistic : bool, default=True
        Whether rows are probability vectors (post-processing then renormalises them).
    """

    name = "callable"

    def __init__(self, func: Callable, n_topics: int, *, name: str | None = None, probabilistic: bool = True) -> None:
        if not callable(func):
            raise TypeError(f"func must be callable, got {type(func).__name__}")
        super().__init__(n_topics, 0)
        self.func = func
        self._name = name
        self.label = name or getattr(func, "__qualname__", repr(func))
        self.probabilistic = probabilistic

    def get_params(self, deep: bool = True) -> dict:
        return {"func": self.func, "n_topics": self.n_topics, "name": self._name, "probabilistic": self.probabilistic}

    def _fit(self, corpus) -> np.ndarray:
        return self.func(corpus)

    def describe(self) -> dict:
        expected, reason = self.stability()
        return {"model": "callable", "function": self.label, "n_topics": self.n_topics,
                "stability": {"expected": expected, "reason": reason}}
