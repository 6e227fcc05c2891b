"""Sensitivity sampling on a ``dask.distributed`` cluster: the same joblib tasks as locally, with P's reference
(indexed by record) and the model scattered once to every worker. Draws are made on the client from one seed,
so the distances equal the local path's for the same ``random_state`` (as long as the model's fit is
deterministic)."""

from __future__ import annotations

import dataclasses

from ..streaming.executor import dask_client
from .sampler import SensitivitySample, SensitivitySampling, sample_sensitivity


def sample_sensitivity_on_cluster(model, corpus, sampling: SensitivitySampling, *, client=None,
                                  address: str | None = None, unit: str = "user",
                                  n_workers: int = 2) -> SensitivitySample:
    """:func:`.sampler.sample_sensitivity` with the pairs on a Dask cluster, the corpus shipped once.

    ``client`` or a scheduler ``address``; with neither, a LocalCluster of ``n_workers`` single-threaded processes
    is started for this call (:func:`topicdp.streaming.dask_client`). The result's ``n_jobs`` is the worker threads.
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
