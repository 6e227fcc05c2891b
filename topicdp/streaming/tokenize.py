"""Tokenisation identical to :meth:`topicdp.corpus.Corpus.from_texts`, one document at a time.

The analyzer is scikit-learn's ``CountVectorizer`` analyzer built with exactly the options
``Corpus.from_texts`` uses, so a token here is a token there. Counting is done here (not by
``CountVectorizer.transform``) so that one analysis per document gives both the counts and the number of
out-of-vocabulary tokens, which ``Corpus.from_texts`` logs with a second analysis.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from ..corpus import make_vectorizer


class Tokenizer:
    """Texts -> (CSR counts over a fixed vocabulary, out-of-vocabulary token count).

    Picklable: the scikit-learn analyzer (a closure) is rebuilt lazily after unpickling, so the object can
    be shipped to Dask workers.
    """

    def __init__(self, vocabulary: Sequence[str] | None, options: dict):
        self.vocabulary = None if vocabulary is None else tuple(vocabulary)
        self.options = dict(options)
        self._analyze: Callable[[str], list[str]] | None = None
        self._index: dict[str, int] | None = None

    def __getstate__(self):
        return {"vocabulary": self.vocabulary, "options": self.options}

    def __setstate__(self, state):
        self.__init__(state["vocabulary"], state["options"])

    @property
    def analyze(self):
        if self._analyze is None:
            self._analyze = make_vectorizer(**self.options).build_analyzer()
        return self._analyze

    @property
    def index(self) -> dict:
        if self._index is None:
            if self.vocabulary is None:
                raise ValueError("the tokenizer has no vocabulary yet (build one first)")
            self._index = {w: i for i, w in enumerate(self.vocabulary)}
        return self._index

    def count(self, texts: list[str]) -> tuple[sp.csr_matrix, int]:
        """Counts of ``texts`` over the vocabulary (rows may be empty) and the out-of-vocabulary tokens."""
        index, analyze = self.index, self.analyze
        indptr = [0]
        cols: list[int] = []
        vals: list[int] = []
        n_oov = 0
        for text in texts:
            counts: Counter[int] = Counter()
            for token in analyze(text):
                j = index.get(token)
                if j is None:
                    n_oov += 1
                else:
                    counts[j] += 1
            cols.extend(counts.keys())
            vals.extend(counts.values())
            indptr.append(len(cols))
        X = sp.csr_matrix(
            (np.asarray(vals, dtype=np.int64), np.asarray(cols, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(texts), len(index)),
        )
        X.sort_indices()
        return X, n_oov
