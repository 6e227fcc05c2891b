"""Sensitivity sampling on a ``dask.distributed`` cluster (TopicDP Alg. 1, pairs run remotely).

The pairs are the same joblib tasks as on one machine (:func:`.sampler.sample_sensitivity`), sent to
the cluster through joblib's Dask backend. What changes is how the data travels: each pair task takes
P's reference corpus indexed by record (:meth:`ResampledRecords.pair_builder`), and joblib would
otherwise pickle it into every batch of tasks. Here it (and the model spec) are *scattered* once to
every worker before the first pair, and each task receives a reference to the worker's copy
(``joblib.parallel_config(backend="dask", scatter=[...])``).

The pair draws are made on the client from one seed, exactly as locally, and every pair is a
deterministic function of its draws, so the Delta_i list is the same as the local path's for the same
``random_state`` (bit for bit, as long as the model's fit is: the adapters fix seeds and Dask starts
its workers with single-threaded BLAS).
"""

from __future__ import annotations

import dataclasses

from ..streaming.executor import dask_client
from .sampler import SensitivitySample, SensitivitySampling, sample_sensitivity


def sample_sensitivity_on_cluster(model, corpus, sampling: SensitivitySampling, *, client=None,
                                  address: str | None = None, unit: str = "user",
                                  n_workers: int = 2) -> SensitivitySample:
    """:func:`.sampler.sample_sensitivity` with the pairs on a Dask cluster, the corpus shipped once.

    Parameters
    ----------
    model, corpus, sampling, unit
        As :func:`.sampler.sample_sensitivity` (the pairs use every worker thread: there is no ``n_jobs``).
    client : dask.distributed.Client, optional
        The cluster to use.
    address : str, optional
        Scheduler address (``"tcp://host:8786"``) to connect to instead. With neither, a LocalCluster of
        ``n_workers`` single-threaded worker processes is started for this call and closed after it
        (:func:`topicdp.streaming.dask_client`).

    Returns
    -------
    SensitivitySample
        Its ``n_jobs`` is the number of worker threads the pairs ran on.
    """
    import joblib

    # P bound once, so that the object scattered below is the one every task receives
    records = sampling.records(corpus, unit)
    sampling = dataclasses.replace(sampling, distribution=records)
    with dask_client(address, client=client, n_workers=n_workers) as live:
        n_threads = sum(live.ncores().values())
        # joblib replaces any argument that *is* one of these objects by the future of its scattered copy
        with joblib.parallel_config(backend="dask", client=live, scatter=[records.pair_builder(), model]):
            result = sample_sensitivity(model, corpus, sampling, unit=unit, n_jobs=-1)
    return dataclasses.replace(result, n_jobs=n_threads) if not result.from_cache else result
