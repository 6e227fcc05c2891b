"""Streaming corpora (topicdp.streaming) and the spectral fit in passes (benchmarks/speed/streaming_spectral.py)."""

import gzip
import json

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.corpus import Corpus
from topicdp.datasets import synthetic_lda
from topicdp.spectral.estimator import SpectralLDA
from topicdp.spectral.moments import M2Operator, prepare_corpus, whitened_m3
from benchmarks.speed.streaming_spectral import (StreamingM2Operator, StreamingSpectralLDA, stream_from_corpus,
                                                streaming_whitened_m3)
from topicdp.spectral.tensor import multilinear
from topicdp.streaming import StreamingCorpus, write_npz_shard
from spectral_reference import explicit_moments


@pytest.fixture(scope="module")
def lee_texts():
    from gensim.test.utils import datapath

    with open(datapath("lee_background.cor"), encoding="latin-1") as fh:
        texts = [line.strip() for line in fh if line.strip()]
    # plus documents that tokenise to nothing (dropped and counted) and to out-of-vocabulary words only
    texts += ["", "the and of 42", "zzzqqq xxyyzz"]
    users = [f"user{i % 41}" for i in range(len(texts))]
    return texts, users


def write_jsonl_shards(directory, texts, users, n_shards=3):
    """Round-robin shards (one gzip'd); returns paths and the documents in stream order."""
    paths, order = [], []
    for s in range(n_shards):
        path = directory / (f"part{s}.jsonl" + (".gz" if s == 1 else ""))
        opener = gzip.open if s == 1 else open
        with opener(path, "wt", encoding="utf-8") as fh:
            for i in range(s, len(texts), n_shards):
                fh.write(json.dumps({"text": texts[i], "user": users[i]}) + "\n")
                order.append(i)
        paths.append(path)
    return paths, [texts[i] for i in order], [users[i] for i in order]


def assert_same_corpus(streamed: Corpus, ref: Corpus):
    assert streamed.vocabulary == ref.vocabulary
    assert streamed.X.shape == ref.X.shape
    assert (streamed.X != ref.X).nnz == 0
    assert np.array_equal(streamed.X.indptr, ref.X.indptr) and np.array_equal(streamed.X.indices, ref.X.indices)
    assert streamed.user_ids == ref.user_ids
    assert np.array_equal(streamed.doc_users, ref.doc_users)


# -- tokenisation -----------------------------------------------------------------------------------


def test_jsonl_chunks_match_from_texts_with_fixed_vocabulary(tmp_path, lee_texts):
    texts, users = lee_texts
    paths, T, U = write_jsonl_shards(tmp_path, texts, users)
    vocabulary = Corpus.from_texts(texts, min_df=2).vocabulary[::2]  # a public list, half the words
    ref = Corpus.from_texts(T, U, vocabulary=vocabulary)
    stream = StreamingCorpus.from_jsonl(str(tmp_path / "part*"), vocabulary=vocabulary, chunk_size=13)
    assert stream.n_docs is None  # unknown before a pass
    chunks = list(stream.iter_chunks())
    assert len(chunks) > 3 and all(c.X.shape[0] <= 13 for c in chunks)
    X = sp.vstack([c.X for c in chunks], format="csr")
    assert X.dtype == np.int64 and (X != ref.X).nnz == 0
    assert [u for c in chunks for u in c.users] == [ref.user_ids[u] for u in ref.doc_users]
    assert stream.n_docs == ref.n_docs and stream.n_tokens == ref.n_tokens
    assert stream.log.out_of_vocabulary_tokens == ref.log.out_of_vocabulary_tokens
    assert stream.log.empty_documents_dropped == ref.log.empty_documents_dropped == 3
    assert_same_corpus(stream.to_corpus(), ref)


@pytest.mark.parametrize("options", [dict(min_df=2, max_df=0.5), dict(min_df=0.01, max_df=40, max_features=700),
                                     dict(stop_words=None, min_token_length=2, max_features=1000)])
def test_vocabulary_from_one_counting_pass_matches_from_texts(tmp_path, lee_texts, options):
    texts, users = lee_texts
    paths, T, U = write_jsonl_shards(tmp_path, texts, users)
    ref = Corpus.from_texts(T, U, **options)
    stream = StreamingCorpus.from_jsonl(paths, chunk_size=50, **options)
    assert stream.vocabulary == ref.vocabulary
    assert_same_corpus(stream.to_corpus(), ref)


def test_user_filter_matches_from_jsonl(tmp_path, lee_texts):
    texts, users = lee_texts
    paths, _, _ = write_jsonl_shards(tmp_path, texts, users, n_shards=1)
    keep = ["user1", "user7", "user30"]
    ref = Corpus.from_jsonl(paths[0], users=keep, min_df=1)
    stream = StreamingCorpus.from_jsonl(paths, users=keep, chunk_size=4)
    assert_same_corpus(stream.to_corpus(), ref)


def test_jsonl_errors(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"text": "apples and oranges"}) + "\n")
    with pytest.raises(ValueError, match="bad.jsonl:1: missing field 'user'"):
        list(StreamingCorpus.from_jsonl(path, vocabulary=["apples"]).iter_chunks())
    with pytest.raises(FileNotFoundError):
        StreamingCorpus.from_jsonl(tmp_path / "nope-*.jsonl", vocabulary=["apples"])
    path.write_text(json.dumps({"text": "apples and oranges", "user": 1}) + "\n")
    with pytest.raises(ValueError, match="max_df"):
        StreamingCorpus.from_jsonl(path, min_df=5, max_df=2)
    with pytest.raises(ValueError, match="min_token_length"):
        StreamingCorpus.from_jsonl(path, min_token_length=0)


# -- count formats ----------------------------------------------------------------------------------


def test_npz_shards_round_trip_and_validation(tmp_path, lee_texts):
    texts, users = lee_texts
    paths, T, U = write_jsonl_shards(tmp_path, texts, users)
    jsonl = StreamingCorpus.from_jsonl(paths, min_df=2, chunk_size=40)
    saved = jsonl.save_npz(tmp_path / "npz")
    assert_same_corpus(saved.to_corpus(), jsonl.to_corpus())

    bad = write_npz_shard(tmp_path / "neg.npz", sp.csr_matrix(np.array([[1, -2, 0]])))
    with pytest.raises(ValueError, match="non-negative integer counts"):
        list(StreamingCorpus.from_npz(bad, vocabulary=["a", "b", "c"]))
    with pytest.raises(ValueError, match="has 3 features, but the 2-word vocabulary is expecting 2"):
        list(StreamingCorpus.from_npz(bad, vocabulary=["a", "b"]))


# -- spectral moments in passes ---------------------------------------------------------------------


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
