"""The interactive HTML view of a release (topicdp.view): publishable content, MDS, relevance, a real browser."""

import dataclasses
import json
import math
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon, pdist, squareform

from topicdp.release import PrivateRelease
from topicdp.report import RANDOM_DP_CAVEAT, build_report
from topicdp.view import (DEFAULT_LAMBDA, EQUAL_SIZES, classical_mds, js_distances, relevance, release_html,
                          view_data)

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[1]
PLANTED = "ZQX-PLANTED-DIAGNOSTIC-7741"
NONPRIVATE_VALUE = 0.0123456789012345  # a number only the non-private matrix holds


def _topics(K=6, V=40, seed=0):
    """K topics, each a bump on a 1-D axis of V words at a random centre: JS distance grows with |c_i - c_j|."""
    rng = np.random.default_rng(seed)
    centres = np.sort(rng.uniform(0, V, size=K))
    words = np.arange(V)
    W = np.exp(-0.5 * ((words[None, :] - centres[:, None]) / 2.5) ** 2) + 1e-4
    return W / W.sum(axis=1, keepdims=True)


def _release(W=None, guarantee="approx-DP", extra=None, vocabulary=None, **fields):
    W = _topics() if W is None else W
    vocabulary = vocabulary or tuple(f"word{j}" for j in range(W.shape[1]))
    published = {"topic_word": "DP", "vocabulary": "public: a public word list"}
    if extra:
        published["extra.alpha"] = "post-processing: of DP outputs"
    report = build_report(mechanism="test-mechanism", guarantee=guarantee, unit="user", neighbours="add-remove",
                          epsilon=2.0, delta=1e-6, seeded=False, published=published, **fields)
    nonprivate = np.full_like(W, NONPRIVATE_VALUE)
    return PrivateRelease(topic_word=W, noisy=None, vocabulary=vocabulary, report=report, nonprivate=nonprivate,
                          extra=extra or {}, diagnostics={"note": PLANTED, "exact_docs": 987654321})


class _Page(HTMLParser):
    """Collects the JSON blocks, the body's attributes, SVG circles, bar rows and the visible text."""

    def __init__(self, text):
        super().__init__()
        self.json_blocks, self.body, self.circles, self.rows, self.text = [], {}, [], [], []
        self._in_json = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("type") == "application/json":
            self._in_json = []
        elif tag == "body":
            self.body = attrs
        elif tag == "circle":
            self.circles.append(attrs)
        elif "bar-row" in (attrs.get("class") or "").split():
            self.rows.append(attrs)

    def handle_endtag(self, tag):
        if tag == "script" and self._in_json is not None:
            self.json_blocks.append("".join(self._in_json))
            self._in_json = None

    def handle_data(self, data):
        if self._in_json is not None:
            self._in_json.append(data)
        else:
            self.text.append(data)


def _data(page):
    parsed = _Page(page)
    assert len(parsed.json_blocks) == 1
    return json.loads(parsed.json_blocks[0]), parsed


# -- structure and what the page may contain ------------------------------------------------------------

def test_json_block_holds_the_released_top_words_sizes_and_finite_coordinates(tmp_path):
    release = _release()
    page = release_html(release, tmp_path / "view.html", n_words=12)
    assert (tmp_path / "view.html").read_text(encoding="utf-8") == page
    data, parsed = _data(page)
    assert data["n_topics"] == release.n_topics == len(data["topics"]) and data["n_words"] == 12
    for topic, released in zip(data["topics"], release.top_words(12)):
        assert topic["words"] == [w for w, _ in released]
        assert topic["p"] == [p for _, p in released]  # the released probabilities, unrounded
    sizes = np.array([t["size"] for t in data["topics"]])
    assert math.isclose(sizes.sum(), 1.0) and np.allclose(sizes, 1 / release.n_topics)
    assert all(math.isfinite(t["x"]) and math.isfinite(t["y"]) for t in data["topics"])
    p_word = sizes @ release.topic_word  # p(w): the size-weighted mean of the released rows
    vocabulary = list(release.vocabulary)
    for topic in data["topics"]:
        assert np.allclose(topic["pw"], [p_word[vocabulary.index(w)] for w in topic["words"]])
    assert data["lambda"] == DEFAULT_LAMBDA
    assert EQUAL_SIZES in "".join(parsed.text) and data["sizes_released"] is False


def test_page_is_offline_and_holds_nothing_private():
    release = _release()
    page = release_html(release)
    assert not re.search(r"https?://", page), "the page must not name any network resource"
    assert "<link" not in page and " src=" not in page
    assert PLANTED not in page and "987654321" not in page  # release.diagnostics
    assert repr(NONPRIVATE_VALUE) not in page and "0.0123456789" not in page  # release.nonprivate
    # the same page from the published dict alone, and from the saved file
    assert release_html(release.to_dict()) == page


def test_page_from_a_saved_file(tmp_path):
    release = _release()
    release.save(tmp_path / "release.json")
    published = json.loads((tmp_path / "release.json").read_text())
    assert release_html(published) == release_html(release)
    with pytest.raises(ValueError, match="missing required field"):
        release_html({k: v for k, v in published.items() if k != "report"})


def test_privacy_summary_is_in_the_page():
    text = "".join(_Page(release_html(_release())).text)
    for piece in ("guarantee", "approx-DP", "unit", "user", "neighbours", "add-remove", "epsilon", "delta", "1e-06",
                  "(2, 1e-06)-DP at the user level"):
        assert piece in text
    assert RANDOM_DP_CAVEAT not in text
    random_dp = "".join(_Page(release_html(_release(guarantee="random-DP", gamma=0.05))).text)
    assert RANDOM_DP_CAVEAT in random_dp and "gamma" in random_dp


def test_released_dirichlet_parameters_size_the_topics():
    alpha = np.array([0.5, 0.1, 0.1, 0.1, 0.1, 0.1])
    data, parsed = _data(release_html(_release(extra={"alpha": alpha})))
    assert np.allclose([t["size"] for t in data["topics"]], alpha / alpha.sum())
    assert data["sizes_released"] is True and EQUAL_SIZES not in "".join(parsed.text)
    unusable = _data(release_html(_release(extra={"alpha": -alpha})))[0]  # not sizes: drawn equal, and said so
    assert np.allclose([t["size"] for t in unusable["topics"]], 1 / 6) and unusable["sizes_released"] is False


def test_words_cannot_break_out_of_the_script_element():
    W = _topics(K=2, V=4)
    hostile = ("</script><script>alert(1)</script>", "a&b", "<!--", "plain")
    page = release_html(_release(W, vocabulary=hostile), n_words=4)
    assert "</script><script>alert" not in page and "<!--" not in page
    data, _ = _data(page)
    assert {w for t in data["topics"] for w in t["words"]} == set(hostile)


def test_n_words_beyond_the_vocabulary_keeps_every_word():
    data = view_data(_release(_topics(K=3, V=5)), n_words=30)
    assert data["n_words"] == 5 and all(len(t["words"]) == 5 for t in data["topics"])


@pytest.mark.parametrize("kwargs, error, message", [
    ({"n_words": 0}, ValueError, r"n_words must be an integer in \[1, inf\], got 0"),
    ({"n_words": 2.5}, TypeError, "n_words must be an integer"),
    ({"relevance_lambda": 1.5}, ValueError, r"relevance_lambda must be in \[0, 1\], got 1.5"),
    ({"relevance_lambda": -0.1}, ValueError, r"relevance_lambda must be in \[0, 1\]"),
    ({"relevance_lambda": "high"}, TypeError, "relevance_lambda must be a real number"),
    ({"title": 3}, TypeError, "title must be a str"),
    ({"path": 3}, TypeError, "path must be a str"),
])
def test_parameters_are_validated(kwargs, error, message):
    with pytest.raises(error, match=message):
        release_html(_release(), **kwargs)


def test_release_must_be_a_release_or_its_published_dict():
    with pytest.raises(TypeError, match="release must be a PrivateRelease or its published dict"):
        release_html(np.eye(3))


# -- the map: Jensen-Shannon distances and classical MDS, against brute force ------------------------------

def test_js_distances_match_scipy_pair_by_pair():
    W = _topics(K=5, V=30, seed=1)
    W[0, :10] = 0.0  # zeros in one row: 0 log 0 = 0
    W /= W.sum(axis=1, keepdims=True)
    D = js_distances(W)
    for i in range(5):
        for j in range(5):
            assert D[i, j] == pytest.approx(jensenshannon(W[i], W[j], base=2), abs=1e-12)
    assert np.array_equal(D, D.T) and np.all(np.diag(D) == 0) and D.max() <= 1.0


def test_mds_reproduces_a_js_triangle_up_to_rotation():
    W = np.array([[0.7, 0.2, 0.1, 0.0], [0.1, 0.6, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]])
    D = js_distances(W)
    X = classical_mds(D)
    assert X.shape == (3, 2) and np.allclose(X.mean(axis=0), 0.0)
    assert np.allclose(squareform(pdist(X)), D, atol=1e-12)  # a metric on 3 points is a Euclidean triangle


def test_mds_recovers_planar_points_exactly():
    P = np.random.default_rng(3).normal(size=(7, 2))
    X = classical_mds(squareform(pdist(P)))
    assert np.allclose(pdist(X), pdist(P), atol=1e-10)


def test_mds_distances_correlate_with_js_distances_for_separated_topics():
    # three themes on disjoint words, three topics near each: the map must show the three groups apart
    rng = np.random.default_rng(2)
    W = np.full((9, 30), 1e-3)
    for k in range(9):
        theme = k // 3
        W[k, 10 * theme:10 * theme + 10] += rng.dirichlet(np.full(10, 5.0))
    W /= W.sum(axis=1, keepdims=True)
    D = js_distances(W)
    X = classical_mds(D)
    assert np.corrcoef(pdist(X), squareform(D, checks=False))[0, 1] > 0.9
    within = [np.linalg.norm(X[i] - X[j]) for i in range(9) for j in range(9) if i < j and i // 3 == j // 3]
    between = [np.linalg.norm(X[i] - X[j]) for i in range(9) for j in range(9) if i // 3 < j // 3]
    assert max(within) < min(between)


def test_mds_of_one_or_two_topics_and_bad_input():
    assert np.array_equal(classical_mds([[0.0]]), np.zeros((1, 2)))
    X = classical_mds([[0.0, 0.5], [0.5, 0.0]])
    assert np.allclose(X[:, 1], 0.0) and math.isclose(abs(X[0, 0] - X[1, 0]), 0.5)
    with pytest.raises(ValueError, match="symmetric"):
        classical_mds([[0.0, 1.0], [2.0, 0.0]])
    with pytest.raises(ValueError, match="square"):
        classical_mds(np.zeros((2, 3)))


# -- relevance (Sievert & Shirley 2014, Eq. 1) ------------------------------------------------------------

def test_relevance_against_a_hand_computation():
    p, pw = [0.5, 0.2, 0.3, 0.0], [0.25, 0.4, 0.3, 0.1]
    got = relevance(p, pw, 0.6)
    by_hand = [0.6 * math.log(0.5) + 0.4 * math.log(2.0),   # lift 0.5 / 0.25 = 2
               0.6 * math.log(0.2) + 0.4 * math.log(0.5),   # lift 0.2 / 0.4 = 0.5
               0.6 * math.log(0.3) + 0.4 * 0.0]              # lift 1
    assert np.allclose(got[:3], by_hand) and got[3] == -np.inf
    assert np.allclose(relevance(p[:3], pw[:3], 1.0), np.log(p[:3]))       # lambda = 1: probability
    assert np.allclose(relevance(p[:3], pw[:3], 0.0), np.log([2.0, 0.5, 1.0]))  # lambda = 0: lift
    with pytest.raises(ValueError, match=r"lambda_ must be in \[0, 1\], got 1.5"):
        relevance(p, pw, 1.5)


# -- the page in a real browser ---------------------------------------------------------------------------

def _chromium(tmp_path, *args):
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium) to run the page")
def test_page_runs_in_headless_chromium(tmp_path):
    release = _release(_topics(K=7, V=50, seed=4))
    page = tmp_path / "view.html"
    release_html(release, page, n_words=15)
    proc = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _Page(proc.stdout)
    assert "data-error" not in dom.body, dom.body.get("data-error")
    assert dom.body.get("data-ready") == "1"
    topics = [c for c in dom.circles if "topic" in c.get("class", "").split()]
    assert len(topics) == release.n_topics
    assert [c["class"] for c in topics if c["data-topic"] == "0"] == ["topic selected"]
    rows = [r for r in dom.rows if r.get("data-topic") == "0"]
    assert len(rows) == 15 and len(dom.rows) == 15  # the bars of topic 0, and only those
    # the script's relevance ranking is Sievert & Shirley's Eq. 1, as computed here in Python
    data = view_data(release, n_words=15)
    t = data["topics"][0]
    order = np.argsort(-relevance(t["p"], t["pw"], DEFAULT_LAMBDA), kind="stable")
    assert [r["data-word"] for r in rows] == [t["words"][i] for i in order]


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium) to run the page")
def test_example_writes_the_page_and_a_screenshot(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "release_view.py"), "--quick",
                           "--out", str(tmp_path / "v.html"), "--screenshot", str(tmp_path / "v.png")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "guarantee: (3, 1e-06)-DP at the user level" in proc.stdout
    assert (tmp_path / "v.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert dataclasses.is_dataclass(PrivateRelease)
