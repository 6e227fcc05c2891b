"""One pass over the shards: map a function over them and add the partial results, locally (one shard in memory at
a time) or one ``dask.distributed`` task per shard; both add the partials in the same fixed pairwise tree, so the
result does not depend on where it ran or which task finished first.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator, Sequence

from .._extras import require
from .._progress import Progress, progress_enabled


def add_partials(a, b):
    """``a + b`` for numbers, arrays and anything with ``+`` (e.g. a ``Counter``), key by key for plain dicts
    (partial sums of a pass)."""
    if type(a) is dict:
        return {key: add_partials(a[key], b[key]) for key in a}
    return a + b


def map_reduce(fn: Callable, shards: Sequence, *, client=None, progress: str | None = None, **shared):
    """``sum(fn(shard, **shared) for shard in shards)``, locally or as one Dask task per shard on ``client`` (``fn``
    module-level, ``shared`` scattered once); ``progress`` names the pass whose finished shards are counted."""
    if not shards:
        raise ValueError("shards is empty: nothing to read")
    counter = None if progress is None else Progress(len(shards), f"{progress} (shards)", bar=progress_enabled())
    if client is None:
        def parts():
            for shard in shards:
                yield fn(shard, **shared)
                if counter is not None:
                    counter.update()
        return tree_sum(parts())
    scattered = {key: share(client, value) for key, value in shared.items()}
    level = client.map(fn, list(shards), pure=False, **scattered)
    if counter is not None:
        from dask.distributed import as_completed

        for _ in as_completed(level):
            counter.update()
    while len(level) > 1:  # fixed pairing: deterministic order of additions
        nxt = [client.submit(add_partials, level[i], level[i + 1], pure=False) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    result = level[0].result()
    del level, scattered  # release the workers' copies
    return result


def tree_sum(parts):
    """The partial sums added in the pairing the Dask reduction uses (level by level: (0, 1), (2, 3), ...,
    an odd last one carried up), holding at most one partial per level: the local and the cluster pass add
    the same numbers in the same order, so they give bit-identical results."""
    stack: list = []  # (level, partial): one per level, levels decreasing from the bottom of the stack
    for part in parts:
        level = 0
        while stack and stack[-1][0] == level:
            part = add_partials(stack.pop()[1], part)
            level += 1
        stack.append((level, part))
    if not stack:
        raise ValueError("nothing to add")
    total = stack.pop()[1]
    while stack:  # the carried odd partials join from the right, as on the cluster
        total = add_partials(stack.pop()[1], total)
    return total


def share(client, value):
    """``value`` on every worker (a Future), or ``value`` itself without a client or if already shared."""
    if client is None:
        return value
    from dask.distributed import Future

    if isinstance(value, Future):
        return value
    # a one-element list, so that list/dict values are shipped whole rather than element by element
    return client.scatter([value], broadcast=True, hash=False)[0]


@contextlib.contextmanager
def dask_client(address: str | None = None, *, client=None, n_workers: int = 2, threads_per_worker: int = 1,
                processes: bool = True, trim_memory: bool = False, **cluster_kwargs) -> Iterator:
    """A ``dask.distributed.Client``: the given one, one connected to ``address``, or a new LocalCluster (the other
    parameters and ``cluster_kwargs`` are for it); only what this function created is closed on exit.
    ``trim_memory=False`` unsets Dask's ``MALLOC_TRIM_THRESHOLD_`` in new workers (it would make every large
    temporary of a streaming pass a fresh mmap with page faults)."""
    if client is not None and address is not None:
        raise ValueError("give either client or address, not both")
    if client is not None:
        yield client
        return
    require("dask.distributed", extra="cluster", purpose="a dask cluster")
    import dask
    from dask.distributed import Client, LocalCluster

    if address is not None:
        with Client(address) as own:
            yield own
        return
    cluster_kwargs.setdefault("dashboard_address", ":0")  # any free port: 8787 may be taken
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    if not trim_memory:
        environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, processes=processes,
                               **cluster_kwargs)
    with cluster, Client(cluster) as own:
        yield own
