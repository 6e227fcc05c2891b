"""The picture of a release (topicdp.plots.plot_release, privatize --plot)."""

import json

import numpy as np
import pytest

from topicdp import Corpus, SklearnNMF, TopicDP
from topicdp.cli import main
from topicdp.plots import NONPRIVATE_CAPTION, plot_release

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WORDS = ["market", "energy", "price", "trade", "contract", "meeting", "schedule", "office", "budget", "report",
         "power", "gas", "deal", "team", "call"]


@pytest.fixture(scope="module")
def release():
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(WORDS, size=30)) for _ in range(60)]
    corpus = Corpus.from_texts(texts, [f"u{i % 12}" for i in range(60)], min_df=1, max_df=1.0)
    # large epsilon: the released topics stay close to the non-private ones, so both panels carry words
    dp = TopicDP(SklearnNMF(3, 0), epsilon=50.0, delta=1e-5, sensitivity="global", random_state=0)
    return dp.fit(corpus, keep_nonprivate=True).release_


def _png(path) -> bytes:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 10_000  # a real picture, not an empty canvas
    return data


def test_one_panel_per_topic_with_the_released_probabilities(tmp_path, release):
    fig = plot_release(release, tmp_path / "r.png", n_words=5)
    _png(tmp_path / "r.png")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == release.n_topics
    for ax, topic in zip(panels, release.top_words(5)):
        widths = [bar.get_width() for bar in ax.patches]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels == [w for w, _ in topic]
        np.testing.assert_allclose(widths, [p for _, p in topic])
    assert NONPRIVATE_CAPTION not in [t.get_text() for t in fig.texts]


def test_nonprivate_side_by_side_carries_the_caption(tmp_path, release):
    fig = plot_release(release, tmp_path / "owner.png", n_words=4, show_nonprivate=True)
    _png(tmp_path / "owner.png")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 2 * release.n_topics
    for k in range(release.n_topics):  # the right panel of pair k is row k of the non-private matrix
        right = panels[2 * k + 1]
        assert "NON-PRIVATE" in right.get_title()
        assert [t.get_text() for t in right.get_yticklabels()] == [w for w, _ in release.nonprivate_top_words(4)[k]]
    assert NONPRIVATE_CAPTION in [t.get_text() for t in fig.texts]


def test_nonprivate_needs_the_kept_matrix(release):
    import dataclasses

    public_only = dataclasses.replace(release, nonprivate=None)
    with pytest.raises(ValueError, match="keep_nonprivate=True"):
        plot_release(public_only, show_nonprivate=True)
    with pytest.raises(ValueError, match="n_words"):
        plot_release(release, n_words=0)


def test_privatize_plot_end_to_end(tmp_path, capsys):
    out, picture = tmp_path / "release.json", tmp_path / "release.png"
    code = main(["privatize", "embedded", "--guarantee", "random-dp", "--private-oracle", "--model", "sklearn-nmf",
                 "--topics", "2", "--n-jobs", "1", "--n-pairs", "4", "--insecure-testing", "--seed", "0",
                 "--show-nonprivate", "--top", "6", "--out", str(out), "--plot", str(picture)])
    assert code == 3  # too few pairs (--insecure-testing): a failed run-time check, in the exit status
    _png(picture)
    printed = capsys.readouterr().out
    assert f"picture of the release written to {picture}" in printed and "do not publish" in printed
    assert json.loads(out.read_text())["report"]["epsilon"] == 3.0


def test_plot_path_is_checked_before_work(tmp_path, capsys):
    code = main(["privatize", "embedded", "--plot", str(tmp_path / "missing" / "r.png")])
    assert code == 2 and "--plot" in capsys.readouterr().err
