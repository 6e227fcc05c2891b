"""What a private release hands to the analyst: the noisy topics, the vocabulary and the privacy report."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .mechanisms.postprocess import top_words
from .report import PrivacyReport


@dataclass
class PrivateRelease:
    """A released topic-word matrix.

    Attributes
    ----------
    topic_word : ndarray, shape (K, V)
        The released matrix after post-processing (rows on the simplex by default).
    noisy : ndarray, shape (K, V)
        The mechanism's raw output before post-processing.
    vocabulary : tuple of str
    report : PrivacyReport
    nonprivate : ndarray or None
        The non-private f(D), kept only when the caller asked for it for evaluation. It is *not*
        private and is never written by :meth:`save` unless asked for explicitly.
    """

    topic_word: np.ndarray
    noisy: np.ndarray
    vocabulary: tuple
    report: PrivacyReport
    nonprivate: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_topics(self) -> int:
        return self.topic_word.shape[0]

    def top_words(self, n: int = 10) -> list[list[tuple[str, float]]]:
        """The n most heavily weighted words of each released topic."""
        return top_words(self.topic_word, self.vocabulary, n)

    def nonprivate_top_words(self, n: int = 10) -> list[list[tuple[str, float]]]:
        if self.nonprivate is None:
            raise ValueError("the non-private matrix was not kept; pass keep_nonprivate=True to privatize()")
        return top_words(self.nonprivate, self.vocabulary, n)

    def to_dict(self, include_nonprivate: bool = False) -> dict:
        out = {
            "report": self.report.to_dict(),
            "vocabulary": list(self.vocabulary),
            "topic_word": self.topic_word.tolist(),
            "noisy": self.noisy.tolist(),
            "top_words": [[w for w, _ in topic] for topic in self.top_words(10)],
        }
        if include_nonprivate and self.nonprivate is not None:
            out["nonprivate_do_not_publish"] = self.nonprivate.tolist()
        return out

    def save(self, path, include_nonprivate: bool = False) -> None:
        Path(path).write_text(json.dumps(self.to_dict(include_nonprivate)))

    @classmethod
    def load(cls, path) -> "PrivateRelease":
        data = json.loads(Path(path).read_text())
        nonprivate = data.get("nonprivate_do_not_publish")
        return cls(
            topic_word=np.asarray(data["topic_word"]),
            noisy=np.asarray(data["noisy"]),
            vocabulary=tuple(data["vocabulary"]),
            report=PrivacyReport.from_dict(data["report"]),
            nonprivate=None if nonprivate is None else np.asarray(nonprivate),
        )
