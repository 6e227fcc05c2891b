"""Dask: the sensitivity sampler's pairs and a streaming corpus' vocabulary pass on a LocalCluster.

The streaming spectral fit over shards is benchmark code; its cluster tests are beside it
(benchmarks/speed/test_streaming_spectral.py).

Run with ``pytest -m cluster``. An in-process LocalCluster (2 workers, 1 thread each) serves most tests;
one test starts 2 worker processes, so that everything crosses a pickle boundary.
"""

import json

import numpy as np
import pytest

from corpora import write_token_shards
from topicdp.adapters import CallableModel, make_model
from topicdp.samplers import PRIVATE_ORACLE, PrivateResample, SensitivitySampling, sample_sensitivity
from topicdp.samplers.cluster import sample_sensitivity_on_cluster
from topicdp.streaming import StreamingCorpus, dask_client

pytestmark = pytest.mark.cluster
pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    with dask_client(n_workers=2, threads_per_worker=1, processes=False) as c:
        yield c


def test_sampling_on_cluster_equals_local(client, lee_corpus):
    """The acceptance test: the sampler's pairs on a 2-worker LocalCluster give the local deltas, bit for bit."""
    corpus = lee_corpus.subset_users(np.arange(50))
    model = make_model("sklearn-nmf", 4, 0, max_iter=60)
    sampling = SensitivitySampling(PRIVATE_ORACLE, 0.1, n_pairs=4, insecure_testing=True, random_state=5)
    here = sample_sensitivity(model, corpus, sampling)
    there = sample_sensitivity_on_cluster(model, corpus, sampling, client=client)
    assert there.deltas == here.deltas  # bit for bit
    assert there.sensitivity == here.sensitivity and there.n_jobs == 2


PICKLES = []


class CountingResample(PrivateResample):
    """P that records every time it is pickled (i.e. shipped somewhere)."""

    def __getstate__(self):
        PICKLES.append(1)
        return self.__dict__.copy()


def first_rows(corpus):
    return np.asarray(corpus.X[:2].toarray() + 1.0, dtype=float)


def test_corpus_is_shipped_once_not_per_pair(client, lee_corpus):
    corpus = lee_corpus.subset_users(np.arange(40))
    model = CallableModel(first_rows, 2, name="first-rows")
    counts = []
    for n_pairs in (4, 16):
        PICKLES.clear()
        distribution = CountingResample(corpus, "user")
        sampling = SensitivitySampling(distribution, 0.1, n_pairs=n_pairs, insecure_testing=True, random_state=0)
        result = sample_sensitivity_on_cluster(model, corpus, sampling, client=client)
        assert len(result.deltas) == n_pairs
        counts.append(len(PICKLES))
    assert counts[0] == counts[1] <= 4  # the scatter's (constant) cost, independent of the number of pairs


def test_sampler_by_scheduler_address(lee_corpus):
    from dask.distributed import LocalCluster

    corpus = lee_corpus.subset_users(np.arange(30))
    model = CallableModel(first_rows, 2, name="first-rows")
    sampling = SensitivitySampling(PRIVATE_ORACLE, 0.1, n_pairs=3, insecure_testing=True, random_state=1)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        there = sample_sensitivity_on_cluster(model, corpus, sampling, address=cluster.scheduler_address)
    assert there.deltas == sample_sensitivity(model, corpus, sampling).deltas
    with pytest.raises(TypeError, match="n_jobs"):  # the pairs use every worker thread: no n_jobs on a cluster
        sample_sensitivity_on_cluster(model, corpus, sampling, address="tcp://unused:1", n_jobs=2)


def test_jsonl_vocabulary_pass_on_cluster(client, tmp_path):
    pattern = write_token_shards(tmp_path, np.random.default_rng(0))
    local = StreamingCorpus.from_jsonl(pattern, min_df=2, chunk_size=40)
    remote = StreamingCorpus.from_jsonl(pattern, min_df=2, chunk_size=40, client=client)
    assert remote.vocabulary == local.vocabulary
    a, b = local.to_corpus(), remote.to_corpus()
    assert (a.X != b.X).nnz == 0 and a.user_ids == b.user_ids
    assert remote.n_docs == local.n_docs == 450


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_worker_processes_equal_local(tmp_path, lee_corpus):
    """Across real process boundaries (everything pickled): JSONL vocabulary pass and sampling."""
    words = np.asarray(lee_corpus.vocabulary)
    X = lee_corpus.X
    texts = [" ".join(np.repeat(words[X.indices[a:b]], X.data[a:b])) for a, b in zip(X.indptr[:120], X.indptr[1:121])]
    for s in range(2):
        with open(tmp_path / f"p{s}.jsonl", "w") as fh:
            for i in range(s, 120, 2):
                fh.write(json.dumps({"text": texts[i], "user": i % 40}) + "\n")
    corpus = lee_corpus.subset_users(np.arange(40))
    model = make_model("sklearn-nmf", 3, 0, max_iter=40)
    sampling = SensitivitySampling(PRIVATE_ORACLE, 0.1, n_pairs=3, insecure_testing=True, random_state=2)
    pattern = str(tmp_path / "p*.jsonl")
    local_stream = StreamingCorpus.from_jsonl(pattern, min_df=3, chunk_size=25)
    here = sample_sensitivity(model, corpus, sampling)
    with dask_client(n_workers=2, threads_per_worker=1, processes=True) as client:
        stream = StreamingCorpus.from_jsonl(pattern, min_df=3, chunk_size=25, client=client)
        there = sample_sensitivity_on_cluster(model, corpus, sampling, client=client)
    assert stream.vocabulary == local_stream.vocabulary
    assert there.deltas == here.deltas
