"""L1 distance and RMSE: closed forms and TopicDP's normalisation (003_* §4)."""

import numpy as np
import pytest

from topicdp.metrics import l1_distance, rmse

A = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
B = np.array([[0.4, 0.5, 0.1], [0.2, 0.0, 0.8]])
# differences: [[0.1, 0, -0.1], [0, 0.3, -0.3]]


def test_entrywise_closed_forms():
    assert l1_distance(A, B) == pytest.approx(0.8)
    assert l1_distance(A, B, convention="entrywise-mean") == pytest.approx(0.8 / 6)
    assert rmse(A, B) == pytest.approx(np.sqrt((0.01 + 0.01 + 0.09 + 0.09) / 6))


def test_topicdp_conventions_closed_forms():
    row_l2 = [np.sqrt(0.02), np.sqrt(0.18)]
    assert l1_distance(A, B, convention="topicdp") == pytest.approx(np.mean(row_l2))
    row_rmse = [np.sqrt(0.02 / 3), np.sqrt(0.18 / 3)]
    assert rmse(A, B, convention="topicdp") == pytest.approx(np.mean(row_rmse))


@pytest.mark.parametrize("n", [2, 5, 10])
def test_topicdp_ratio_is_sqrt_n_as_in_the_papers_figures(n):
    """TopicDP Fig. 5 reports L1/RMSE = sqrt(n) (1.41 at 2x2, 3.16 at 10x10): true for its conventions,
    far from the entrywise ones (about 0.80 m n for Gaussian noise)."""
    rng = np.random.default_rng(n)
    W = rng.dirichlet(np.ones(n), size=n)
    noisy = W + rng.normal(0, 0.3, size=W.shape)
    ratio = l1_distance(noisy, W, convention="topicdp") / rmse(noisy, W, convention="topicdp")
    assert ratio == pytest.approx(np.sqrt(n))
    entry_ratio = l1_distance(noisy, W) / rmse(noisy, W)
    assert entry_ratio > 0.5 * n * n


def test_zero_distance_and_symmetry():
    assert l1_distance(A, A) == 0 and rmse(A, A) == 0
    assert l1_distance(A, B, convention="topicdp") == pytest.approx(l1_distance(B, A, convention="topicdp"))


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="same shape"):
        l1_distance(A, B[:1])
    with pytest.raises(ValueError, match="convention"):
        rmse(A, B, convention="sum")
