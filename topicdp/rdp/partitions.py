"""Partitions of one dataset: the key naming a partitioning, and the one rule that composes releases over them.

Under document-level add/remove neighbours a document lies in at most one part of each partitioning (the periods of
a series: a function of each document's own date, stated before the data are read). Releases of the parts of one
partitioning compose in parallel (McSherry 2009, "Privacy integrated queries", Thm. 4); releases under different
partitionings of the same dataset compose sequentially, since any combination of one part per partitioning may hold
a document. :func:`worst_combination` is that rule, generic in what it composes: the in-memory ledger's entries
(:mod:`topicdp.rdp.ledger`) and the persisted ledger's runs (:mod:`topicdp.rdp.ledger_file`) both go through it.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from itertools import product
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Tuple, TypeVar

#: above this many combinations of one part per partitioning, totals are bounded (module docstring)
MAX_COMBINATIONS = 1024

T = TypeVar("T")
V = TypeVar("V")


def partitioning_key(corpus: str, period: str, date_field: str, date_format: Optional[str] = None) -> str:
    """The key naming one partitioning of one dataset: its corpus, the period kind, the date field and its format.

    Entries with the same key and different ``partition`` labels read disjoint parts of the same documents (each
    document's part is a function of its own date field) and compose in parallel (McSherry 2009, "Privacy
    integrated queries", Thm. 4); entries of different keys compose sequentially (module docstring).

    Parameters
    ----------
    corpus : str
        The corpus's identity, e.g. ``"sha256:<hex>"`` of the file's bytes (:func:`topicdp.pipeline.over_time.
        corpus_digest`): two files share it only if they hold the same bytes.
    period : str
        The period kind (``"month"``, ``"quarter"``).
    date_field : str
        The records' date field the periods are read from.
    date_format : str, optional
        The format the dates are read under (:class:`topicdp.pipeline.over_time.PeriodSpec`); None (ISO 8601)
        leaves it out of the key, which is then the key of the three above.

    Returns
    -------
    str
        Canonical JSON of them (the persisted ledger stores it as is).
    """
    named = [("corpus", corpus), ("period", period), ("date_field", date_field)]
    if date_format is not None:
        named.append(("date_format", date_format))
    for name, value in named:
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return json.dumps(dict(named), sort_keys=True, separators=(",", ":"))


def worst_combination(items: Sequence[T], key: Callable[[T], Optional[Tuple[Hashable, str]]],
                      compose: Callable[[List[T]], V], *, signature: Callable[[T], Hashable],
                      bound: Callable[[List[T], List[List[List[T]]]], V], limit: Optional[int] = None) -> V:
    """The largest sequential composition over every combination of one part per partitioning.

    ``key(item)`` is ``None`` for an item that read all the data (it is in every combination) or
    ``(partitioning, part)``. Under document-level add/remove neighbours a document lies in at most one part of each
    partitioning, so the releases it can change are the unlabelled ones and one part of each partitioning: the
    parts of one partitioning compose in parallel (McSherry 2009, "Privacy integrated queries", Thm. 4) and the
    partitionings sequentially with each other (each ``compose``: RDP, GDP or basic composition, Dwork & Roth
    2014, Thm. 3.16). The result is
    exact when any combination of parts may hold a document (two series by different functions of the data: the
    ledger does not know how the functions relate), and the only valid total without that knowledge.

    Parameters
    ----------
    items : sequence
        Entries (or runs) to compose.
    key : callable
        ``item -> None | (partitioning, part)``.
    compose : callable
        The sequential composition of a list of items: a number that never decreases when an item is added (every
        composition of the ledger has that property), so that a part whose items are a sub-multiset of another
        part's (by ``signature``) is dropped without changing the result.
    signature : callable
        ``item -> hashable``: equal signatures cost the same.
    bound : callable
        ``(common, partitionings)`` -> an upper bound of the result without enumerating (``partitionings``: for
        each partitioning, its parts' items), used when the product of the numbers of parts exceeds ``limit``.
    limit : int, optional
        Default :data:`MAX_COMBINATIONS`.

    Returns
    -------
    The largest ``compose`` over the combinations (or ``bound``'s value).
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


def _undominated(parts: List[List[T]], signature: Callable[[T], Hashable]) -> List[List[T]]:
    """The parts whose items are not a sub-multiset of another kept part's (duplicates kept once)."""
    counted = sorted(((Counter(signature(i) for i in part), part) for part in parts), key=lambda cp: -len(cp[1]))
    kept: List[Tuple[Counter, List[T]]] = []
    for count, part in counted:
        if not any(all(other[s] >= n for s, n in count.items()) for other, _ in kept):
            kept.append((count, part))
    return [part for _, part in kept]
