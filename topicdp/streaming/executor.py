"""One pass over the shards: map a function over them and add the partial results (locally or on Dask).

Every pass of the streaming algorithms is a *map-reduce* whose partial results are sums (numbers,
arrays, dicts of those, or anything with ``+``), so the only difference between running locally and on
a cluster is the order of the additions: results agree up to floating-point reassociation.

* Locally the shards are read one after the other and added in shard order: memory holds one chunk
  and the running sums.
* With a ``dask.distributed`` client, the arguments every task shares (the reader with its vocabulary,
  the block being multiplied) are scattered to the workers once per pass, one task per shard reads its
  own shard, and the partial sums are added by a fixed pairwise tree on the workers, so the result does
  not depend on which task finishes first and only one array comes back to the client.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator, Sequence

from .._extras import require


def add_partials(a, b):
    """``a + b`` for numbers and arrays, key by key for dicts (partial sums of a pass)."""
    if isinstance(a, dict):
        return {key: add_partials(a[key], b[key]) for key in a}
    return a + b


def map_reduce(fn: Callable, shards: Sequence, *, client=None, **shared):
    """``sum(fn(shard, **shared) for shard in shards)``, locally or as Dask tasks over the shards.

    Parameters
    ----------
    fn : callable
        A module-level function (picklable), ``fn(shard, **shared) -> partial sum``.
    shards : sequence
        Non-empty.
    client : dask.distributed.Client, optional
        Run one task per shard on this client's cluster.
    **shared
        Arguments common to all tasks; on Dask they are scattered (broadcast) once.
    """
    if not shards:
        raise ValueError("shards is empty: nothing to read")
    if client is None:
        total = None
        for shard in shards:
            part = fn(shard, **shared)
            total = part if total is None else add_partials(total, part)
        return total
    return _dask_map_reduce(client, fn, shards, shared)


def share(client, value):
    """``value`` on every worker (a Future), or ``value`` itself without a client or if already shared."""
    if client is None:
        return value
    from dask.distributed import Future

    if isinstance(value, Future):
        return value
    # a one-element list, so that list/dict values are shipped whole rather than element by element
    return client.scatter([value], broadcast=True, hash=False)[0]


def _dask_map_reduce(client, fn, shards, shared):
    scattered = {key: share(client, value) for key, value in shared.items()}
    level = client.map(fn, list(shards), pure=False, **scattered)
    while len(level) > 1:  # fixed pairing: deterministic order of additions
        nxt = [client.submit(add_partials, level[i], level[i + 1], pure=False) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    result = level[0].result()
    del level, scattered  # release the workers' copies
    return result


@contextlib.contextmanager
def dask_client(address: str | None = None, *, client=None, n_workers: int = 2, threads_per_worker: int = 1,
                processes: bool = True, trim_memory: bool = False, **cluster_kwargs) -> Iterator:
    """A ``dask.distributed.Client``: the given one, one connected to ``address``, or a new LocalCluster.

    Only what this function created is closed on exit. The other parameters apply to a new
    ``LocalCluster`` only; ``cluster_kwargs`` go to it (default: the dashboard on a free port).

    trim_memory : bool, default=False
        Keep Dask's ``MALLOC_TRIM_THRESHOLD_=65536`` in the new worker processes. Dask sets it so that
        workers hand freed memory back to the OS; it also turns off glibc's adaptive mmap threshold, so
        every multi-megabyte temporary of a chunk (``X @ Q``, sparse slices) is a fresh mmap with page
        faults. The streaming passes allocate such temporaries per chunk; the setting made the M2 pass
        1.7x slower here. Workers started elsewhere (``dask worker``) follow their own configuration.
    """
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
