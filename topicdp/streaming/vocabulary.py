"""A vocabulary built in one counting pass, with ``CountVectorizer``'s rules (as ``Corpus.from_texts``).

Memory grows with the number of distinct tokens, not with the number of documents. Partial counts of
shards add up (``+``), so the pass can run as Dask tasks over shards.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np


@dataclass
class TokenCounts:
    """Document frequency and total count of every token, and the number of documents seen."""

    document_frequency: Counter = field(default_factory=Counter)
    term_frequency: Counter = field(default_factory=Counter)
    n_docs: int = 0

    def add_document(self, tokens: list[str]) -> None:
        counts = Counter(tokens)
        self.term_frequency.update(counts)
        self.document_frequency.update(counts.keys())
        self.n_docs += 1

    def __add__(self, other: "TokenCounts") -> "TokenCounts":
        return TokenCounts(
            self.document_frequency + other.document_frequency,
            self.term_frequency + other.term_frequency,
            self.n_docs + other.n_docs,
        )

    def vocabulary(self, min_df=1, max_df=1.0, max_features: int | None = None) -> list[str]:
        """The words ``CountVectorizer(min_df, max_df, max_features).fit`` keeps, in its (sorted) order.

        Mirrors ``CountVectorizer.fit_transform`` (scikit-learn 1.x, ``_limit_features``): counts are
        compared with ``max_df`` / ``min_df`` (fractions of *all* documents read, empty ones included),
        then the ``max_features`` largest total counts are kept, with ties resolved by the same numpy
        ``argsort`` on the same (alphabetically ordered) array, so the result is identical.
        """
        terms = sorted(self.document_frequency)
        if not terms:
            raise ValueError("no vocabulary could be built: the texts have no tokens (only stop words?)")
        dfs = np.fromiter((self.document_frequency[t] for t in terms), dtype=np.int64, count=len(terms))
        high = float(max_df) if isinstance(max_df, Integral) else max_df * self.n_docs
        low = float(min_df) if isinstance(min_df, Integral) else min_df * self.n_docs
        if high < low:
            raise ValueError("max_df corresponds to < documents than min_df")
        mask = (dfs <= high) & (dfs >= low)
        if max_features is not None and mask.sum() > max_features:
            tfs = np.fromiter((self.term_frequency[t] for t in terms), dtype=np.int64, count=len(terms))
            keep = np.where(mask)[0][(-tfs[mask]).argsort()[:max_features]]
            mask = np.zeros(len(terms), dtype=bool)
            mask[keep] = True
        if not mask.any():
            raise ValueError("After pruning, no terms remain. Try a lower min_df or a higher max_df.")
        return [t for t, m in zip(terms, mask) if m]
