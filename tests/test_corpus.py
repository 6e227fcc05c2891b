import gzip
import json

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.corpus import Corpus

# every reader is fed the same corpus in turn: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


TEXTS = [
    "The cats sat on the mat with other cats",
    "Dogs chase cats; cats chase mice!",
    "a an the",  # stop words only: empty after tokenisation
    "Mice eat cheese and cheese eats nobody",
]
USERS = ["u1", "u1", "u2", "u3"]


def test_from_texts_tokenises_deterministically_and_reports_empty_documents():
    c = Corpus.from_texts(TEXTS, USERS)
    assert c.n_docs == 3 and c.log.empty_documents_dropped == 1
    assert c.log.users_without_documents == 1  # u2 had only the empty document
    assert c.user_ids == ("u1", "u3")
    assert "cats" in c.vocabulary and "the" not in c.vocabulary and "a" not in c.vocabulary
    j = c.vocabulary.index("cats")
    assert c.X[0, j] == 2 and c.X[1, j] == 2
    again = Corpus.from_texts(TEXTS, USERS)
    assert c.fingerprint() == again.fingerprint()


def test_min_token_length_and_public_vocabulary_counts_oov():
    c = Corpus.from_texts(TEXTS, USERS, vocabulary=["cats", "cheese"])
    assert c.vocabulary == ("cats", "cheese")
    assert c.log.out_of_vocabulary_tokens > 0
    short = Corpus.from_texts(["ox ox cat"], min_token_length=2, stop_words=None)
    assert "ox" in short.vocabulary


def test_html_character_references_are_decoded_not_counted_as_words():
    """Blog text carries markup entities (``&nbsp;`` was the blogs' 2nd most frequent token when undecoded):
    decoded, they separate words and are no word themselves, with or without the semicolon."""
    from topicdp.corpus import tokenize

    texts = ["Ben &amp; Jerry&nbsp;rocks&nbsp;&nbsp;today", "caf&eacute; nbsp&nbspstreet &#8217;quoted&#8217;"]
    assert tokenize(texts) == [["ben", "jerry", "rocks", "today"], ["café", "nbsp", "street", "quoted"]]
    c = Corpus.from_texts(texts)
    assert "amp" not in c.vocabulary and "jerrynbsprocks" not in c.vocabulary
    assert c.X[:, c.vocabulary.index("nbsp")].sum() == 1  # the word as written, not the entity


def test_public_vocabulary_counts_equal_a_fixed_vocabulary_vectorizer():
    """One tokenisation on a word list gives scikit-learn's fixed-vocabulary counts, and the out-of-vocabulary
    tokens are every analysed token not counted (stop words in the list count nothing, as there)."""
    from topicdp.corpus import make_vectorizer

    words = ["cats", "cheese", "zebra", "the", "dogs"]
    c = Corpus.from_texts(TEXTS, USERS, vocabulary=words)
    vectorizer = make_vectorizer(vocabulary=words)
    X = vectorizer.fit_transform(TEXTS).tocsr()
    kept = np.asarray(X.sum(axis=1)).ravel() > 0
    assert (c.X != X[kept]).nnz == 0
    analyze = vectorizer.build_analyzer()
    assert c.log.out_of_vocabulary_tokens == sum(len(analyze(t)) for t in TEXTS) - X.sum()
    with pytest.raises(ValueError, match="distinct words"):
        Corpus.from_texts(TEXTS, USERS, vocabulary=["cats", "cats"])


EDGE_TEXTS = [
    "abc1 1abc abc_def _abc x_y naïve Café ÉTÉ été straße ǅemal",  # digits, underscores, non-ASCII letters
    "&amp;amp; AT&amp;T caf&eacute; &#8217;tis don't   TABS\tand\nnewlines",  # entities, contractions
    "", "the and of a an", "K\u212a kelvin sign İstanbul ﬁne",  # empty, stop words only, case mapping oddities
]


@pytest.mark.parametrize("stop_words, min_token_length", [("english", 3), (None, 2), (["cats", "mice"], 4)])
def test_count_words_equals_the_fixed_vocabulary_vectorizer(monkeypatch, stop_words, min_token_length):
    """The counting behind every word list gives scikit-learn's counts and out-of-vocabulary tokens exactly, on
    edge cases, the Lee corpus and (when present) the first 3,000 blog posts, in one process or in 2 by chunk."""
    import itertools
    from pathlib import Path

    from topicdp import corpus as corpus_module
    from topicdp.corpus import count_words, embedded_texts, make_vectorizer, read_jsonl_records

    texts = EDGE_TEXTS + TEXTS + embedded_texts()
    relative = Path("shared", "data", "blogs", "blogs.jsonl.gz")  # beside the checkout or a folder of worktrees
    blogs = next((p / relative for p in Path(__file__).resolve().parents if (p / relative).exists()), None)
    if blogs is not None:
        texts += [t for t, _ in itertools.islice(read_jsonl_records(blogs), 3000)]
    options = dict(stop_words=stop_words, min_token_length=min_token_length)
    everything = make_vectorizer(**options).fit(texts)
    words = sorted(everything.vocabulary_)[::7] + ["the", "cats", "été", "zzzz", "ab1"]  # stop, absent, untokenisable
    words = list(dict.fromkeys(words))
    expected = make_vectorizer(vocabulary=words, **options).fit_transform(texts).tocsr()
    n_oov = int(everything.transform(texts).sum() - expected.sum())
    monkeypatch.setattr(corpus_module, "PARALLEL_MIN_DOCS", 100)
    for n_jobs in (1, 2):
        X, oov = count_words(texts, words, n_jobs=n_jobs, **options)
        assert X.shape == expected.shape and X.has_sorted_indices and X.dtype == np.int64
        assert (X != expected).nnz == 0 and oov == n_oov
        assert X.sum() > 0 and oov > 0


def test_from_matrix_and_gensim_agree():
    from gensim.corpora import Dictionary

    docs = [["apple", "pear", "apple"], ["pear", "plum"], ["plum", "plum", "apple"]]
    d = Dictionary(docs)
    bow = [d.doc2bow(x) for x in docs]
    c1 = Corpus.from_gensim(d, bow, users=["a", "b", "a"])
    vocab = [d[i] for i in range(len(d))]
    X = np.zeros((3, len(d)), dtype=int)
    for i, doc in enumerate(bow):
        for w, n in doc:
            X[i, w] = n
    c2 = Corpus.from_matrix(X, vocab, users=["a", "b", "a"])
    assert (c1.X != c2.X).nnz == 0 and c1.vocabulary == c2.vocabulary
    assert c1.n_users == 2
    d2, bow2 = c1.to_gensim()
    assert bow2 == [sorted(b) for b in bow] and d2.token2id == d.token2id


def test_sklearn_vocabulary_dict():
    from sklearn.feature_extraction.text import CountVectorizer

    cv = CountVectorizer()
    X = cv.fit_transform(["red green green", "blue red"])
    c = Corpus.from_matrix(X, cv.vocabulary_)
    assert c.vocabulary == tuple(cv.get_feature_names_out())


def test_from_jsonl_gzip_with_user_subset(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    rows = [{"user": f"u{i % 3}", "text": f"alpha beta gamma{i % 2} delta"} for i in range(9)]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    c = Corpus.from_jsonl(path)
    assert c.n_docs == 9 and c.n_users == 3
    sub = Corpus.from_jsonl(path, users=["u0"])
    assert sub.n_docs == 3 and sub.user_ids == ("u0",)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"user": "x"}) + "\n")
    with pytest.raises(ValueError, match="text"):
        Corpus.from_jsonl(bad)


def test_bounding_counts_what_it_cuts():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(2.0, size=(20, 30)))
    users = [i // 5 for i in range(20)]  # 4 users x 5 docs
    c = Corpus.from_matrix(X, [f"w{i}" for i in range(30)], users)
    docs_only = c.bound(max_docs_per_user=3, random_state=1)
    assert np.bincount(docs_only.doc_users).max() == 3
    assert docs_only.log.documents_cut_by_max_docs_per_user == 8 and docs_only.log.users_capped == 4
    both = c.bound(max_docs_per_user=3, max_tokens_per_doc=40, random_state=1)
    lengths = np.asarray(docs_only.X.sum(axis=1)).ravel()
    assert np.asarray(both.X.sum(axis=1)).ravel().tolist() == np.minimum(lengths, 40).tolist()
    assert both.log.tokens_cut_by_max_tokens_per_doc == int(np.clip(lengths - 40, 0, None).sum()) > 0
    assert both.log.documents_truncated == int((lengths > 40).sum())
    # a truncated document keeps a sub-multiset of its own tokens
    assert (both.X.toarray() <= docs_only.X.toarray()).all()


@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([[1, -1]]), "non-negative"),
        (np.array([[1.0, np.nan]]), "finite"),
        (np.array([[0.5, 1]]), "integer"),
        (np.zeros((0, 3)), "empty"),
        (np.zeros((2, 2)), "empty"),
    ],
)
def test_bad_counts_fail_early(X, match):
    with pytest.raises(ValueError, match=match):
        Corpus.from_matrix(X, [f"w{i}" for i in range(X.shape[1])])


def test_users_without_documents_and_bad_bounds():
    with pytest.raises(ValueError, match="no documents"):
        Corpus(X=sp.csr_matrix(np.ones((2, 2), dtype=int)), vocabulary=("a", "b"), doc_users=np.array([0, 0]),
               user_ids=("x", "y"))
    c = Corpus.from_matrix(np.ones((2, 2), dtype=int), ["a", "b"])
    with pytest.raises(ValueError, match="max_docs_per_user"):
        c.bound(max_docs_per_user=0)
    with pytest.raises(ValueError, match="users must give one user id per document"):
        Corpus.from_matrix(np.ones((2, 2), dtype=int), ["a", "b"], users=["x"])
    with pytest.raises(ValueError, match="texts is empty"):
        Corpus.from_texts([])


def test_subset_users_repeats_become_distinct_users():
    c = Corpus.from_matrix(np.eye(3, dtype=int), ["a", "b", "c"], users=["x", "y", "x"])
    s = c.subset_users(np.array([0, 0, 1]))
    assert s.n_users == 3 and s.n_docs == 5
    assert s.user_ids[0] == "x" and s.user_ids[1] == ("x", 1)


# -- recognising a corpus: one check for every reader ---------------------------------------------------------


def _duck(corpus):
    """A corpus of another class: the three fields only (as the audit's CorpusData, or a caller's own class)."""
    from types import SimpleNamespace

    return SimpleNamespace(X=corpus.X, doc_users=corpus.doc_users, vocabulary=list(corpus.vocabulary))


def test_is_corpus_and_split_corpus(tmp_path):
    from types import SimpleNamespace

    from topicdp.audit import as_corpus_data
    from topicdp.corpus import is_corpus, split_corpus
    from topicdp.streaming import StreamingCorpus, write_npz_shard

    c = Corpus.from_texts(TEXTS, USERS)
    for obj in (c, _duck(c), as_corpus_data(c)):
        assert is_corpus(obj)
        counts, doc_users, vocabulary = split_corpus(obj)
        assert counts is obj.X and np.array_equal(doc_users, c.doc_users) and vocabulary == c.vocabulary
    not_corpora = (c.X, c.X.toarray(), SimpleNamespace(X=c.X, doc_users=c.doc_users),  # no vocabulary
                   StreamingCorpus.from_npz(write_npz_shard(tmp_path / "c.npz", c.X), vocabulary=c.vocabulary))
    # (a stream holds no X: the streaming estimators check for it)
    for obj in not_corpora:
        assert not is_corpus(obj) and split_corpus(obj) == (obj, None, None)


def test_every_reader_takes_a_corpus_of_another_class_as_a_corpus():
    """The estimators and fold-in read a duck-typed corpus exactly as the Corpus it copies: user units, vocabulary."""
    from topicdp.baselines import SVILDA
    from topicdp.datasets import synthetic_lda
    from topicdp.spectral import DPSpectralMoments
    from topicdp.variational import VariationalLDA

    data = synthetic_lda(600, 20, 2, alpha0=1.0, random_state=0)
    c = Corpus.from_matrix(data.X, [f"w{j}" for j in range(20)], users=np.arange(600) // 3)
    vem = [VariationalLDA(2, unit="user", n_iterations=2, random_state=0).fit(obj) for obj in (c, _duck(c))]
    np.testing.assert_array_equal(vem[0].topic_word_, vem[1].topic_word_)
    assert vem[1].vocabulary_ == c.vocabulary
    assert SVILDA(2, n_iterations=2, random_state=0).fit(_duck(c)).vocabulary_ == c.vocabulary
    spectral = [DPSpectralMoments(2, epsilon=50.0, strict=False, random_state=0).fit(obj) for obj in (c, _duck(c))]
    np.testing.assert_array_equal(spectral[0].topic_word_, spectral[1].topic_word_)
    assert spectral[1].release_.report.unit == "user" and spectral[1].release_.vocabulary == c.vocabulary
    renamed = _duck(c)
    renamed.vocabulary = [f"x{j}" for j in range(20)]
    with pytest.raises(ValueError, match="vocabulary=release.vocabulary"):
        vem[0].transform(renamed)


def test_a_release_states_where_the_corpus_words_came_from_by_default():
    """A word list the caller gives is stated public (covered); words built from the private texts are not; the
    bounded and subset corpora keep where their words came from; an explicit vocabulary_source still wins."""
    from topicdp import TopicDP
    from topicdp.baselines import DPStochasticVI
    from topicdp.spectral import DPSpectralMoments
    from topicdp.variational import DPVariationalEM
    from topicdp.adapters import make_model

    texts = ["goal match team win", "bake oven bread flour", "vote poll party win", "goal team match bread"] * 6
    users = [i // 2 for i in range(len(texts))]
    built = Corpus.from_texts(texts, users, stop_words=None)
    given = Corpus.from_texts(texts, users, vocabulary=sorted(built.vocabulary), stop_words=None)
    assert built.vocabulary_source == "private-texts" and given.vocabulary_source == "public"
    assert given.bound(max_docs_per_user=1).vocabulary_source == "public"
    assert given.subset_users(np.array([0, 1])).vocabulary_source == "public"
    for estimator in (DPVariationalEM(2, epsilon=1.0, unit="document", n_iterations=1, random_state=0),
                      TopicDP(make_model("vem", 2), epsilon=1.0, unit="document", sensitivity="global", random_state=0),
                      DPSpectralMoments(2, epsilon=1.0, unit="document", random_state=0),
                      DPStochasticVI(2, epsilon=1.0, random_state=0)):
        statuses = {name: estimator.fit(corpus).release_.report.published["vocabulary"]
                    for name, corpus in (("built", built), ("given", given))}
        assert statuses["built"].startswith("NOT COVERED") and statuses["given"].startswith("public"), statuses
        stated = estimator.fit(given, vocabulary_source="private-texts").release_.report.published["vocabulary"]
        assert stated.startswith("NOT COVERED")
