"""The interactive HTML view of a release (topicdp.view): publishable content, MDS, relevance, a real browser."""

import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon, pdist, squareform

from topicdp.private_release import PrivateRelease
from reports import make_report
from facts import assert_facts
from topicdp.report import RANDOM_DP_CAVEAT, total
from topicdp.view import (DEFAULT_LAMBDA, EQUAL_SIZES, MAP_MARGIN, MAP_SIZE, MAX_OVERLAP, circle_layout, classical_mds,
                          js_distances, lens_area, relevance, release_html, topic_sizes, view_data)

# the Debian package's binary, wherever PATH finds it (the tests that need it skip only when there is none)
_FOUND = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
CHROMIUM = Path(_FOUND)
NO_CHROMIUM = "no chromium binary on PATH or at /usr/bin/chromium (apt-get install chromium) to run the page"
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
    report = make_report(mechanism="test-mechanism", guarantee=guarantee, unit="user", neighbours="add-remove",
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
    assert data["lambda"] == DEFAULT_LAMBDA == 1.0
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
    for piece in ("guarantee", "approx-DP", "unit", "user", "neighbours", "add-remove", "requested epsilon", "delta",
                  "1e-06"):
        assert piece in text
    assert RANDOM_DP_CAVEAT not in text
    random_dp = "".join(_Page(release_html(_release(guarantee="random-DP", gamma=0.05))).text)
    assert RANDOM_DP_CAVEAT in random_dp and "gamma" in random_dp


def _headline(page):
    found = re.search(r'<div class="line" id="headline">([^<]*)</div>', page)
    assert found, "the header has no headline"
    return found.group(1)


def test_header_opens_on_the_reports_headline_without_its_padding():
    # certified below the request: the headline carries both; no separate 'certified epsilon' row
    release = _release(composition_total=[total("rdp", 1.7, 1e-6), total("basic", 2.0, 1e-6)])
    assert release.report.headline().startswith("guarantee   ")
    page = release_html(release)
    assert_facts(_headline(page), "guarantee", "(1.7, 1e-06)-DP", "each user", "add-remove",
                 "(certified; requested epsilon 2)", ordered=True)
    assert _headline(page) == " ".join(release.report.headline().split())
    first = page.index('<div class="line"')
    assert page.index("<header>") < first < page.index('<div class="kv">')  # the first line under the title
    text = "".join(_Page(page).text)
    assert "certified epsilon" not in text and "requested epsilon 2" in text
    plain = _headline(release_html(_release()))  # at the request: nothing else to say
    assert_facts(plain, "guarantee", "(2, 1e-06)-DP", "(certified)", ordered=True)
    assert "requested" not in plain


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


# -- the map's circles: laid out in Python, none covering another ------------------------------------------

def _lens(r1, r2, d):
    """Area of the intersection of two discs (the textbook formula, written here independently of the view)."""
    if d >= r1 + r2:
        return 0.0
    if d <= abs(r1 - r2):
        return math.pi * min(r1, r2) ** 2
    x = (d * d + r1 * r1 - r2 * r2) / (2 * d)  # the common chord's distance from centre 1
    h = math.sqrt(max(0.0, r1 * r1 - x * x))   # half the chord
    seg1 = r1 * r1 * math.acos(x / r1) - x * h
    seg2 = r2 * r2 * math.acos((d - x) / r2) - (d - x) * h
    return seg1 + seg2


def test_lens_area_is_exact():
    for r1, r2, d in [(1.0, 1.0, 1.0), (2.0, 1.0, 2.5), (3.0, 1.0, 2.2), (1.0, 1.5, 0.9)]:
        # against a fine grid over the smaller disc's bounding box
        n = 1200
        small, big = sorted([(r1, 0.0), (r2, d)])
        axis = np.linspace(-small[0], small[0], n)
        gx, gy = np.meshgrid(axis + small[1], axis)
        inside = ((gx - 0.0) ** 2 + gy ** 2 <= r1 * r1) & ((gx - d) ** 2 + gy ** 2 <= r2 * r2)
        grid = inside.sum() * (2 * small[0] / (n - 1)) ** 2
        assert _lens(r1, r2, d) == pytest.approx(grid, rel=5e-3)
        assert lens_area(r1, r2, d) == pytest.approx(_lens(r1, r2, d), rel=1e-12)
    assert _lens(1.0, 1.0, 0.0) == pytest.approx(math.pi) and _lens(1.0, 2.0, 3.0) == 0.0


def _crowd(K, seed):
    """K topics on V = 300 words: one far from the rest, the others noisy copies of one row (a noisy release).

    MDS of such rows puts K - 1 points close together and one far away; a map scaled to its span (the view
    before the layout) draws the K - 1 circles on top of one another."""
    rng = np.random.default_rng(seed)
    base = rng.dirichlet(np.full(300, 0.3))
    W = base * rng.lognormal(0.0, 0.15, size=(K, 300))
    W[0] = rng.dirichlet(np.full(300, 0.3))
    return W / W.sum(axis=1, keepdims=True)


def _circles(data):
    return [(t["cx"], t["cy"], t["r"]) for t in data["topics"]]


def _worst_pair(circles):
    """(the largest overlap as a share of the smaller circle's area, the pair)."""
    worst = (0.0, None)
    for i in range(len(circles)):
        for j in range(i + 1, len(circles)):
            (x1, y1, r1), (x2, y2, r2) = circles[i], circles[j]
            share = _lens(r1, r2, math.hypot(x1 - x2, y1 - y2)) / (math.pi * min(r1, r2) ** 2)
            if share > worst[0]:
                worst = (share, (i, j))
    return worst


@pytest.mark.parametrize("K", [2, 5, 10, 20, 50])
@pytest.mark.parametrize("shape", ["crowd", "noisy"])
@pytest.mark.parametrize("sizes", ["equal", "unequal"])
def test_no_circle_covers_more_than_a_fifth_of_another(K, shape, sizes):
    rng = np.random.default_rng(K)
    W = _crowd(K, K) if shape == "crowd" else rng.dirichlet(np.full(300, 0.05), size=K)
    extra = None
    if sizes == "unequal":  # sizes from 1 to 1,000 (the smallest circles at the 3-unit floor)
        alpha = np.geomspace(1.0, 1000.0, K)[rng.permutation(K)]
        extra = {"alpha": alpha}
    release = _release(W, extra=extra)
    data = view_data(release, n_words=5)
    circles = _circles(data)
    worst, pair = _worst_pair(circles)
    assert worst <= MAX_OVERLAP, f"circles {pair} overlap by {worst:.1%} of the smaller one"
    assert worst == 0.0  # the layout separates them entirely (labels in free discs); 20% is the contract
    for cx, cy, r in circles:  # every circle whole on the map
        assert MAP_MARGIN - 1e-6 <= cx - r and cx + r <= MAP_SIZE - MAP_MARGIN + 1e-6
        assert MAP_MARGIN - 1e-6 <= cy - r and cy + r <= MAP_SIZE - MAP_MARGIN + 1e-6
    radii = np.array([r for _, _, r in circles])
    size = np.array([t["size"] for t in data["topics"]])
    big = radii > 3.0 + 1e-9  # areas proportional to the sizes, above the 3-unit floor
    assert np.allclose(radii[big] ** 2 / size[big], (radii[big] ** 2 / size[big])[0], rtol=1e-3)  # radii to 0.001
    assert view_data(release, n_words=5) == data  # deterministic


def test_the_crowd_overlaps_when_drawn_at_its_mds_positions():
    # the view before the layout: MDS scaled to the map's span, radii as above; this is what the layout fixes
    W = _crowd(10, 10)
    X = classical_mds(js_distances(W))
    data = view_data(_release(W), n_words=5)
    radii = [t["r"] for t in data["topics"]]
    span = np.ptp(X, axis=0).max()
    inner = MAP_SIZE - 2 * (MAP_MARGIN + max(radii))
    naive = [(MAP_SIZE / 2 + (x - X[:, 0].mean()) * inner / span, MAP_SIZE / 2 - (y - X[:, 1].mean()) * inner / span, r)
             for (x, y), r in zip(X, radii)]
    assert _worst_pair(naive)[0] > 0.5
    assert _worst_pair(_circles(data))[0] == 0.0


def test_separated_topics_keep_their_mds_geometry():
    # topics far apart need no move: the circles' centres are the MDS points, scaled
    W = np.full((3, 30), 1e-4)
    for k in range(3):
        W[k, 10 * k:10 * k + 10] = 1.0
    W /= W.sum(axis=1, keepdims=True)
    X = classical_mds(js_distances(W))
    centres, radii, origin = circle_layout(X, np.ones(3))
    ratio = pdist(centres) / pdist(X)
    assert np.allclose(ratio, ratio[0], rtol=5e-3)  # up to the layout's half-unit start offsets


def test_layout_of_identical_topics_and_of_a_hundred_is_fast_and_separated():
    import time

    for K in (1, 2, 100):
        start = time.perf_counter()
        centres, radii, _ = circle_layout(np.zeros((K, 2)), np.ones(K))  # every topic at one point
        assert time.perf_counter() - start < 10.0  # well under a second unloaded
        assert _worst_pair([(x, y, r) for (x, y), r in zip(centres, radii)])[0] == 0.0
    with pytest.raises(ValueError, match="sizes positive"):
        circle_layout(np.zeros((2, 2)), [1.0, 0.0])


# -- the bars the page opens on ---------------------------------------------------------------------------

def test_default_bars_are_the_printed_top_words():
    # topics of unequal sizes: at Sievert & Shirley's lambda = 0.6 the lift reorders the words
    release = _release(extra={"alpha": np.array([0.5, 0.1, 0.1, 0.1, 0.1, 0.1])})
    data = view_data(release, n_words=12)
    printed = release.top_words(12)
    reordered = 0
    for t, words in zip(data["topics"], printed):
        # the script's ranking: relevance at the page's lambda, ties by p(w|t), then by position
        order = np.lexsort((np.arange(len(t["p"])), -np.array(t["p"]), -relevance(t["p"], t["pw"], data["lambda"])))
        assert [t["words"][i] for i in order] == [w for w, _ in words]
        at_06 = np.argsort(-relevance(t["p"], t["pw"], 0.6), kind="stable")
        reordered += [t["words"][i] for i in at_06] != [w for w, _ in words]
    assert reordered > 0  # the default matters: lambda 0.6 would show other words first
    assert release.top_words()[0] == printed[0][:10]


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


def _dom(tmp_path, page):
    proc = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _Page(proc.stdout)
    assert "data-error" not in dom.body, dom.body.get("data-error")
    assert dom.body.get("data-ready") == "1"
    return dom


@pytest.mark.skipif(not CHROMIUM.exists(), reason=NO_CHROMIUM)
def test_page_runs_in_headless_chromium(tmp_path):
    # a crowd of near-identical topics and one apart, sizes from 1 to 100: drawn at their MDS positions, the
    # crowd's circles would sit on one another
    K = 10
    alpha = np.geomspace(1.0, 100.0, K)[np.random.default_rng(5).permutation(K)]
    release = _release(_crowd(K, 10), extra={"alpha": alpha})
    page = tmp_path / "view.html"
    release_html(release, page, n_words=15)
    dom = _dom(tmp_path, page)
    topics = [c for c in dom.circles if "topic" in c.get("class", "").split()]
    assert len(topics) == release.n_topics
    assert [c["class"] for c in topics if c["data-topic"] == "0"] == ["topic selected"]
    # what the browser draws: no circle covers more than a fifth of another
    drawn = [(float(c["cx"]), float(c["cy"]), float(c["r"])) for c in topics]
    worst, pair = _worst_pair(drawn)
    assert worst <= MAX_OVERLAP, f"circles {pair} overlap by {worst:.1%} of the smaller one in the page"
    rows = [r for r in dom.rows if r.get("data-topic") == "0"]
    assert len(rows) == 15 and len(dom.rows) == 15  # the bars of topic 0, and only those
    # the page opens on the words the release prints, in its order
    assert [r["data-word"] for r in rows] == [w for w, _ in release.top_words(15)[0]]
    text = " ".join("".join(dom.text).split())
    assert " ".join(release.report.headline().split()) in text and "certified epsilon" not in text


@pytest.mark.skipif(not CHROMIUM.exists(), reason=NO_CHROMIUM)
def test_script_ranks_by_relevance_at_another_lambda(tmp_path):
    W = np.random.default_rng(4).dirichlet(np.full(50, 0.3), size=7)  # words shared unevenly: lift matters
    release = _release(W, extra={"alpha": np.arange(1.0, 8.0)})
    page = tmp_path / "view.html"
    release_html(release, page, n_words=15, relevance_lambda=0.3)
    rows = [r for r in _dom(tmp_path, page).rows if r.get("data-topic") == "0"]
    # the script's relevance ranking is Sievert & Shirley's Eq. 1, as computed here in Python
    t = view_data(release, n_words=15)["topics"][0]
    order = np.argsort(-relevance(t["p"], t["pw"], 0.3), kind="stable")
    assert [r["data-word"] for r in rows] == [t["words"][i] for i in order]
    assert [r["data-word"] for r in rows] != t["words"]  # lambda 0.3 does reorder this topic


@pytest.mark.skipif(not CHROMIUM.exists(), reason=NO_CHROMIUM)
def test_example_writes_the_page_and_a_screenshot(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "release_view.py"), "--quick",
                           "--out", str(tmp_path / "v.html"), "--screenshot", str(tmp_path / "v.png")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "guarantee: (3, 1e-06)-DP at the user level" in proc.stdout
    assert (tmp_path / "v.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert dataclasses.is_dataclass(PrivateRelease)


def _visible(page):
    """The page's text a reader sees: without the script, the style and the embedded JSON."""
    return " ".join(re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I).split())


def test_a_release_without_released_sizes_prints_no_size():
    page = release_html(_release())
    text = re.sub(r"<[^>]+>", " ", _visible(page))
    assert EQUAL_SIZES in text  # the one line saying so
    assert "size" not in text.replace(EQUAL_SIZES, "").lower()
    assert 'id="topic-size"' not in page and "%" not in text
    sized = re.sub(r"<[^>]+>", " ", _visible(release_html(_release(extra={"alpha": np.arange(1.0, 7.0)}))))
    assert "Circle area: topic size" in sized and "(size" in sized and EQUAL_SIZES not in sized


@pytest.mark.skipif(not CHROMIUM.exists(), reason=NO_CHROMIUM)
def test_circles_state_a_size_only_where_the_release_publishes_one(tmp_path):
    page = tmp_path / "view.html"
    release_html(_release(), page)
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    titles = re.findall(r"<circle[^>]*>\s*<title>([^<]*)</title>", dom)
    assert len(titles) == 6 and not any("size" in t for t in titles)
    radii = {c["r"] for c in _dom(tmp_path, page).circles if "topic" in c.get("class", "")}
    assert len(radii) == 1  # drawn equal
    release_html(_release(extra={"alpha": np.arange(1.0, 7.0)}), page)
    sized = _chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert re.search(r"<title>topic 5 \(size 28\.6%\)", sized)
    assert re.search(r'id="topic-size">\d+\.\d%<', sized)


def test_topic_sizes_come_only_from_parameters_published_as_dp_outputs():
    alpha = np.arange(1.0, 7.0)
    published = _release(extra={"alpha": alpha}).to_dict()
    assert topic_sizes(published)[1].endswith("(post-processing)")
    for status in (None, "public: a stated prior"):  # no status, or a public prior: not a measured size
        statuses = dict(published["report"]["published"])
        statuses.pop("extra.alpha")
        if status:
            statuses["extra.alpha"] = status
        sizes, source = topic_sizes({**published, "report": {**published["report"], "published": statuses}})
        assert np.allclose(sizes, 1 / 6) and source.startswith(EQUAL_SIZES)
