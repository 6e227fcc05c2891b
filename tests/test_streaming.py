"""Streaming corpora (topicdp.streaming): tokenisation in chunks and the count formats.

The spectral fit in passes over them is benchmark code, tested beside it (benchmarks/speed/test_streaming_spectral.py).
"""

import gzip
import json

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.corpus import Corpus
from topicdp.streaming import StreamingCorpus, write_npz_shard


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
