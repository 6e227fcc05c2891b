"""Partitions of one dataset: the key naming a partitioning, and the one rule composing releases over them.

Under document-level add/remove neighbours a document lies in at most one part of each partitioning, so releases
of one partitioning's parts compose in parallel (McSherry 2009, "Privacy integrated queries", Thm. 4) and
different partitionings sequentially. :func:`worst_combination` is that rule, for the in-memory ledger's entries
and the persisted ledger's runs alike.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from itertools import product
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Tuple, TypeVar

#: above this many combinations of one part per partitioning, totals are bounded
MAX_COMBINATIONS = 1024

T = TypeVar("T")
V = TypeVar("V")


def partitioning_key(corpus: str, period: str, date_field: str, date_format: Optional[str] = None) -> str:
    """The canonical JSON key of one partitioning: the corpus identity (e.g. ``"sha256:<hex>"`` of its bytes),
    the period kind, the date field and (unless ISO 8601, None) the date format. Entries of one key and different
    ``partition`` labels read disjoint documents."""
    named = [("corpus", corpus), ("period", period), ("date_field", date_field)]
    if date_format is not None:
        named.append(("date_format", date_format))
    for name, value in named:
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return json.dumps(dict(named), sort_keys=True, separators=(",", ":"))


def part_key(part: Optional[str], partitioning: Optional[str]) -> Optional[Tuple[Hashable, str]]:
    """``(partitioning, part)``, None for no part; a part without partitioning (legacy) is its own partitioning."""
    if part is None:
        return None
    return (("partitioning", partitioning) if partitioning is not None else ("legacy", part)), part


def worst_combination(items: Sequence[T], key: Callable[[T], Optional[Tuple[Hashable, str]]],
                      compose: Callable[[List[T]], V], *, signature: Callable[[T], Hashable],
                      bound: Callable[[List[T], List[List[List[T]]]], V], limit: Optional[int] = None) -> V:
    """The largest sequential composition over every combination of one part per partitioning.

    A document can change the unlabelled items (``key`` None) and one part of each partitioning, so this is exact
    when any combination may hold a document (the ledger does not know how partitionings relate). ``compose``
    must never decrease when an item is added, so a part whose items are a sub-multiset of another's (by
    ``signature``) is dropped; past ``limit`` (:data:`MAX_COMBINATIONS`) combinations, ``bound(common,
    partitionings)`` gives an upper bound instead.
    """
    common: List[T] = []
    groups: Dict[Hashable, Dict[str, List[T]]] = {}
    for item in items:
        k = key(item)
        if k is None:
            common.append(item)
        else:
            groups.setdefault(k[0], {}).setdefault(k[1], []).append(item)
    if not groups:
        return compose(common)
    partitionings = [_undominated(list(groups[k].values()), signature) for k in sorted(groups, key=str)]
    size = math.prod(len(parts) for parts in partitionings)
    if size > (MAX_COMBINATIONS if limit is None else limit):
        return bound(common, partitionings)
    return max(compose(common + [item for part in combination for item in part])  # type: ignore[type-var]
               for combination in product(*partitionings))


def worst_sum(common: List[T], groups: List[List[List[T]]], cost: Callable[[List[T]], float]) -> float:
    """A ``bound`` for :func:`worst_combination` of an additive ``cost``: ``common``'s and each partitioning's
    worst part's, summed."""
    return cost(common) + sum(max(cost(part) for part in parts) for parts in groups)


def _undominated(parts: List[List[T]], signature: Callable[[T], Hashable]) -> List[List[T]]:
    """The parts whose items are not a sub-multiset of another kept part's (duplicates kept once)."""
    counted = sorted(((Counter(signature(i) for i in part), part) for part in parts), key=lambda cp: -len(cp[1]))
    kept: List[Tuple[Counter, List[T]]] = []
    for count, part in counted:
        if not any(all(other[s] >= n for s, n in count.items()) for other, _ in kept):
            kept.append((count, part))
    return [part for _, part in kept]
