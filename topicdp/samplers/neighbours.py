"""The sampling distribution P of neighbouring datasets (TopicDP Alg. 1 lines 3-7).

Sensitivity sampling draws h pairs (D, D') of neighbouring datasets from P: N - 1 shared records plus one
record each, all i.i.d. from P, where a *record* is a user (user-level privacy) or a document
(document-level privacy) and N is the number of records in the private corpus. The random-DP guarantee
then holds *with respect to P*: it covers neighbours that look like P's draws, nothing else.

Two choices of P:

* :class:`PublicReference` — records drawn uniformly from a public corpus of the same domain. This is
  what Rubinstein & Alda's guarantee assumes: P is independent of the private data.
* :class:`PrivateResample` — records drawn with replacement from the private corpus itself, as TopicDP
  did. The sampler then queries the private data as an oracle; the report says so, because Delta_s is
  itself a function of the private data and was not released privately.
"""

from __future__ import annotations

from dataclasses import dataclass
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
        """The reference indexed by record (:class:`.pairs.PairBuilder`): built once per distribution, so
        that every pair slices the same arrays and a cluster receives the same object once."""
        from .pairs import PairBuilder

        builder = self.__dict__.get("_pair_builder")
        if builder is None or builder.reference is not self.reference or builder.unit != self.unit:
            builder = self.__dict__["_pair_builder"] = PairBuilder(self.reference, self.unit)
        return builder

    def build(self, records: np.ndarray):
        """The corpus made of the given reference records (the sampler uses :meth:`pair_builder`, which
        gives the same corpora faster)."""
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


class PublicReference(ResampledRecords):
    """P = uniform over the records of a public corpus (Rubinstein & Alda's assumption)."""

    def __init__(self, reference, unit: str = "user") -> None:
        super().__init__(reference, unit, "public-reference")


class PrivateResample(ResampledRecords):
    """P = uniform over the private corpus' own records, as TopicDP did (the private data is the oracle)."""

    def __init__(self, reference, unit: str = "user") -> None:
        super().__init__(reference, unit, "private-resample")

    def describe(self) -> dict:
        return {
            **super().describe(),
            "caveat": "P resamples the private corpus itself: the sampled sensitivity depends on the private "
            "data and is not itself released under DP",
        }
