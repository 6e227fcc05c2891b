"""The spectral fit in passes (``streaming_spectral.py``, beside this file) against the in-memory estimator.

The moments' products and the whitened tensor, computed chunk by chunk, equal :mod:`topicdp.spectral.moments`'
in-memory ones and the loop-built moments of ``tests/spectral_reference.py``; the fit equals ``SpectralLDA``'s
with the same seed, locally and on a Dask cluster (those tests are marked ``cluster``: ``pytest -m cluster``).
Collected by the default test command (``testpaths`` in pyproject.toml).
"""


import numpy as np
import pytest
import scipy.sparse as sp

from benchmarks.speed.streaming_spectral import (StreamingM2Operator, StreamingSpectralLDA, stream_from_corpus,
                                                 streaming_whitened_m3)
from tests.corpora import write_token_shards
from tests.spectral_reference import explicit_moments
from topicdp.datasets import synthetic_lda
from topicdp.spectral.estimator import SpectralLDA
from topicdp.spectral.moments import M2Operator, prepare_corpus, whitened_m3
from topicdp.spectral.tensor import multilinear
from topicdp.streaming import StreamingCorpus, dask_client, write_npz_shard


@pytest.fixture(scope="module")
def lee_corpus():
    from topicdp.corpus import embedded_corpus

    return embedded_corpus()


@pytest.fixture(scope="module")
def lda_data():
    X = synthetic_lda(2500, 250, 5, alpha0=1.0, mean_length=30, random_state=3).X.tolil()
    X[:4] = 0  # empty documents (dropped by the readers, left out as short by prepare_corpus)
    X[4:6, :] = 0  # and documents with fewer than 3 tokens
    X[4, 7] = 2
    X[5, 9] = 1
    return X.tocsr()


@pytest.fixture
def npz_stream(tmp_path, lda_data):
    paths = [write_npz_shard(tmp_path / f"s{i}.npz", lda_data[a:a + 600]) for i, a in enumerate(range(0, 2500, 600))]
    return StreamingCorpus.from_npz(paths, vocabulary=[f"w{i}" for i in range(250)], chunk_size=128)


# -- the moments in passes ---------------------------------------------------------------------------------


def test_streaming_m2_products_and_tensor_equal_in_memory(npz_stream, lda_data):
    corpus = prepare_corpus(lda_data)
    op, sop = M2Operator(corpus, 0.8), StreamingM2Operator(npz_stream, 0.8)
    rng = np.random.default_rng(0)
    for _ in range(2):  # the first product (with the corpus statistics) and a later one
        Q = rng.standard_normal((250, 7))
        np.testing.assert_allclose(sop.matmat(Q), op.matmat(Q), rtol=1e-11, atol=1e-15)
    assert sop.stats.n_docs == corpus.n_docs and sop.n_passes == 2
    W = rng.standard_normal((250, 5))
    np.testing.assert_allclose(streaming_whitened_m3(sop, W), whitened_m3(corpus, 0.8, W), rtol=1e-10, atol=1e-14)


def test_streaming_tensor_equals_explicit_moments():
    """An independent check: the tensor pass against M3_hat of Eqs. 2-9 built by loops (tiny data)."""
    X = sp.csr_matrix(np.random.default_rng(1).poisson(1.2, size=(9, 5)))
    stream = stream_from_corpus(X, chunk_size=2, n_shards=3)
    op = StreamingM2Operator(stream, 1.5)
    M1, M2, M3 = explicit_moments(X, 1.5)
    np.testing.assert_allclose(op.matmat(np.eye(5)), M2, atol=1e-13)
    W = np.random.default_rng(2).standard_normal((5, 3))
    np.testing.assert_allclose(streaming_whitened_m3(op, W), multilinear(M3, W), atol=1e-13)


# -- the fit ------------------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:eigenpairs of M2_hat did not converge")
@pytest.mark.parametrize("max_iter", [300, 5])  # to convergence, and a fixed 5-pass randomized range finder
def test_streaming_fit_equals_spectral_lda(npz_stream, lda_data, max_iter):
    ref = SpectralLDA(5, 1.0, random_state=7, max_iter=max_iter).fit(lda_data)
    fit = StreamingSpectralLDA(5, 1.0, random_state=7, max_iter=max_iter).fit(npz_stream)
    for name in ("topic_word_", "alpha_", "eigenvalues_", "whitened_tensor_", "tensor_eigenvalues_"):
        np.testing.assert_allclose(getattr(fit, name), getattr(ref, name), rtol=1e-8, atol=1e-12, err_msg=name)
    assert (fit.n_documents_, fit.n_short_documents_) == (ref.n_documents_, ref.n_short_documents_) == (2494, 6)
    if max_iter == 5:  # a fixed budget: 5 products with M2_hat + 1 tensor pass, stopped before tol
        assert fit.n_passes_ == 6 and not fit.eigen_converged_
    else:
        assert fit.eigen_converged_ and fit.n_passes_ < 60
    assert npz_stream.n_docs == 2496  # non-empty documents, recorded by the first pass


def test_streaming_fit_from_corpus_and_errors(lee_corpus):
    ref = SpectralLDA(4, 2.0, random_state=0).fit(lee_corpus.X)
    fit = StreamingSpectralLDA(4, 2.0, random_state=0).fit(lee_corpus)
    np.testing.assert_allclose(fit.topic_word_, ref.topic_word_, rtol=1e-8, atol=1e-12)
    short = stream_from_corpus(sp.csr_matrix(np.eye(6, dtype=int)))
    with pytest.raises(ValueError, match="fewer than 3 tokens"):
        StreamingSpectralLDA(2, 1.0).fit(short)
    with pytest.raises(TypeError, match="StreamingCorpus"):
        StreamingSpectralLDA(2, 1.0).fit([[1, 2]])


# -- on a Dask cluster (pytest -m cluster) ------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("dask.distributed")
    with dask_client(n_workers=2, threads_per_worker=1, processes=False) as c:
        yield c


@pytest.mark.cluster
def test_spectral_fit_on_cluster_equals_local(client, tmp_path):
    X = synthetic_lda(2000, 200, 5, alpha0=1.0, mean_length=40, random_state=11).X
    paths = [write_npz_shard(tmp_path / f"s{i}.npz", X[a:a + 400]) for i, a in enumerate(range(0, 2000, 400))]
    stream = StreamingCorpus.from_npz(paths, vocabulary=[f"w{i}" for i in range(200)], chunk_size=150)
    local = SpectralLDA(5, 1.0, random_state=2).fit(X)
    remote = StreamingSpectralLDA(5, 1.0, random_state=2, client=client).fit(stream)
    for name in ("topic_word_", "alpha_", "whitened_tensor_"):
        np.testing.assert_allclose(getattr(remote, name), getattr(local, name), rtol=1e-8, atol=1e-12, err_msg=name)


@pytest.mark.cluster
def test_fit_of_a_jsonl_stream_on_cluster_equals_local(client, tmp_path):
    pattern = write_token_shards(tmp_path, np.random.default_rng(0))
    local = StreamingCorpus.from_jsonl(pattern, min_df=2, chunk_size=40)
    remote = StreamingCorpus.from_jsonl(pattern, min_df=2, chunk_size=40, client=client)
    a = StreamingSpectralLDA(3, 1.0, random_state=0).fit(local)
    b = StreamingSpectralLDA(3, 1.0, random_state=0, client=client).fit(remote)
    np.testing.assert_allclose(b.topic_word_, a.topic_word_, rtol=1e-8, atol=1e-12)


@pytest.mark.cluster
def test_fit_on_worker_processes_equals_local(tmp_path):
    """Across real process boundaries: the per-shard functions are pickled by reference and imported there."""
    pytest.importorskip("dask.distributed")
    pattern = write_token_shards(tmp_path, np.random.default_rng(1))
    local = StreamingSpectralLDA(3, 1.0, random_state=0).fit(
        StreamingCorpus.from_jsonl(pattern, min_df=3, chunk_size=25))
    with dask_client(n_workers=2, threads_per_worker=1, processes=True) as client:
        stream = StreamingCorpus.from_jsonl(pattern, min_df=3, chunk_size=25, client=client)
        fit = StreamingSpectralLDA(3, 1.0, random_state=0, client=client).fit(stream)
    np.testing.assert_allclose(fit.topic_word_, local.topic_word_, rtol=1e-8, atol=1e-12)
