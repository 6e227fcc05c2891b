"""The sampling distribution P of neighbouring datasets (TopicDP Alg. 1 lines 3-7).

A pair (D, D') is N - 1 shared records plus one record each, all i.i.d. from P (a record is a user or a
document; N the private corpus' count). The random-DP guarantee holds with respect to P: it covers neighbours
that look like P's draws, nothing else. :class:`PublicReference` draws from a public corpus of the same domain
(Rubinstein & Aldà's assumption: P independent of the private data); :class:`PrivateResample` from the private
corpus itself, as TopicDP did, and the report says Delta_s is then a function of the private data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_option

if TYPE_CHECKING:
    from ..corpus import Corpus

from .._names import UNITS  # noqa: E402


@dataclass
class ResampledRecords:
    """Records of ``reference`` drawn uniformly with replacement (the common core of both choices of P)."""

    reference: Corpus
    unit: str = "user"
    kind: str = "resample"

    def __post_init__(self) -> None:
        check_option(self.unit, "unit", UNITS)

    @property
    def n_reference_records(self) -> int:
        return self.reference.n_users if self.unit == "user" else self.reference.n_docs

    def draw_indices(self, n_records: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Record indices of D and D': they share the first N - 1 and differ in the last."""
        draws = rng.integers(0, self.n_reference_records, size=n_records + 1)
        return draws[:n_records], np.concatenate([draws[: n_records - 1], draws[n_records:]])

    def pair_builder(self):
        """The reference indexed by record (:class:`.pairs.PairBuilder`), built once per distribution so that a cluster
        receives one object."""
        from .pairs import PairBuilder

        builder = self.__dict__.get("_pair_builder")
        if builder is None or builder.reference is not self.reference or builder.unit != self.unit:
            builder = self.__dict__["_pair_builder"] = PairBuilder(self.reference, self.unit)
        return builder

    def build(self, records: np.ndarray):
        """The corpus of the given reference records (the slow reference path :meth:`pair_builder` equals)."""
        if self.unit == "user":
            return self.reference.subset_users(records)
        return self.reference.subset_documents(records)

    def describe(self) -> dict:
        return {
            "kind": self.kind,
            "unit": self.unit,
            "records": f"{self.unit}s drawn uniformly with replacement",
            "reference_records": self.n_reference_records,
            "reference_fingerprint": self.reference.fingerprint(),
            **({"bounds": self.reference.bounds} if self.reference.bounds else {}),
        }


@dataclass
class PublicReference(ResampledRecords):
    """P = uniform over the records of a public corpus (Rubinstein & Alda's assumption)."""

    kind: str = field(default="public-reference", init=False)


@dataclass
class PrivateResample(ResampledRecords):
    """P = uniform over the private corpus' own records, as TopicDP did (the private data is the oracle)."""

    kind: str = field(default="private-resample", init=False)

    def describe(self) -> dict:
        return {
            **super().describe(),
            "caveat": "P resamples the private corpus itself: the sampled sensitivity depends on the private "
            "data and is not itself released under DP",
        }
