"""The agnostic road's panels (TopicDP Figs. 3-5, 7-10): TopicDP vs MVG vs Laplace over epsilon, gamma
and matrix size, for LDA, LSI and HDP.

Per (model, K, repeat) the model is fitted once and its sensitivity is sampled once with the largest h
of the gamma grid; the Delta_i of a smaller h are a prefix of that sample (pair i is drawn from child i
of one ``SeedSequence``, whatever h is), so every gamma reuses the same fits. Each mechanism is then
applied to the full K x V matrix through the library's own release path (``TopicDP.fit`` with the
fit and the sensitivity sample passed in, :func:`topicdp.mechanisms.mvg_release`) and compared with the
non-private one on the full matrix and on TopicDP's view (each topic's ``top_n`` non-private keywords).
As in TopicDP's experiments, P resamples the private corpus (``SensitivitySampling("private-oracle")``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..adapters import make_model
from ..agnostic import TopicDP
from ..mechanisms.mvg import mvg_release
from ..metrics import l1_distance, mean_kendall_distance, rmse
from ..samplers import PRIVATE_ORACLE, SensitivitySampling, sample_sensitivity, sample_size
from ..samplers.sampler import SensitivitySample
from ..samplers.sizing import order_statistic

MECHANISMS = ("topicdp", "mvg", "laplace")


def sampled_sensitivities(model, corpus, gammas, seed: int, n_jobs: int,
                          cache_dir=None) -> tuple[dict, SensitivitySample]:
    """A SensitivitySample for every gamma from one sample of max h pairs (prefix property, module docstring).

    The sample of gamma holds the first h(gamma) pairs, exactly what Thm. 1 asks for at that gamma.
    """
    sizes = {g: sample_size(g) for g in gammas}
    h_max = max(h for _, h, _ in sizes.values())
    sampling = SensitivitySampling(PRIVATE_ORACLE, min(gammas), n_pairs=h_max, insecure_testing=True, random_state=seed,
                                   cache_dir=cache_dir)
    sample = sample_sensitivity(model, corpus, sampling, n_jobs=n_jobs)
    deltas = np.asarray(sample.deltas)
    out = {}
    for g, (rho, h, _) in sizes.items():
        assert rho is not None  # the default (Lambert-W) sizing has a rho
        k = order_statistic(g, h, rho)
        out[g] = replace(sample, sensitivity=float(np.sort(deltas[:h])[k - 1]), deltas=deltas[:h].tolist(),
                         gamma=g, rho=rho, h=h, k=k, sufficient=True, fit_seconds=sample.fit_seconds[:h])
    return out, sample


def release(mechanism: str, model, corpus, W, epsilon, delta, gamma, sample, rng):
    """One mechanism's noisy matrix, its guarantee, noise scale and sensitivity, by the library's release path."""
    if mechanism in ("topicdp", "laplace"):
        privatizer = (TopicDP(model, epsilon=epsilon, delta=delta, sampling=SensitivitySampling(PRIVATE_ORACLE, gamma), random_state=rng)
                      if mechanism == "topicdp" else
                      TopicDP(model, epsilon=epsilon, delta=delta, mechanism="laplace", sensitivity="global", random_state=rng))
        rel = privatizer.fit(corpus, topic_word=W,
                             sensitivity_sample=sample if mechanism == "topicdp" else None).release_
        return rel.noisy, rel.report.guarantee, rel.report.sigma, rel.report.sensitivity
    if mechanism == "mvg":
        delta_s = sample.sensitivity
        # sup ||f||_F = sqrt(K) for rows on the simplex; float rounding can put a row sum at 1 + 1e-7
        sup_norm = float(np.sqrt(W.shape[0]) * max(1.0, W.sum(axis=1).max()))
        rel = mvg_release(W, epsilon, delta, delta_s, gamma=sup_norm, sensitivity_method="sampled",
                          random_dp_gamma=gamma, neighbours="replace-one", random_state=rng)
        return rel.noisy, rel.report.guarantee, rel.report.sigma, delta_s
    raise ValueError(f"mechanism must be one of {MECHANISMS}; got {mechanism!r}")


def metrics(noisy, W, top_n: int) -> dict:
    cols = np.argsort(-W, axis=1, kind="stable")[:, :top_n]
    nb, wb = np.take_along_axis(noisy, cols, 1), np.take_along_axis(W, cols, 1)
    return {
        "l1": l1_distance(nb, wb, convention="topicdp"),
        "rmse": rmse(nb, wb, convention="topicdp"),
        "l1_entrywise": l1_distance(nb, wb),
        "kendall": mean_kendall_distance(nb, wb),
        "l1_full": l1_distance(noisy, W),
        "rmse_full": rmse(noisy, W),
    }


def run_agnostic(store, corpus, corpus_name: str, grid, progress, cache_dir=None) -> None:
    """Fill ``store`` with the agnostic panels of ``grid`` (see :class:`CompareGrid`)."""
    for model_name, n_topics, panels in grid.agnostic_tasks():
        for rep in range(grid.repeats):
            combos = [(p, m, e, g) for p, eps_list, g_list in panels for m in grid.mechanisms
                      for e in eps_list for g in g_list]
            todo = [c for c in combos if not store.has(**_key(c, corpus_name, model_name, n_topics, rep))]
            if not todo:
                continue
            model = make_model(model_name, n_topics, 0)
            W = model.fit_topic_word(corpus)
            gammas = sorted({g for _, _, _, g in todo})
            samples, sample = sampled_sensitivities(model, corpus, gammas, seed=rep, n_jobs=grid.n_jobs,
                                                    cache_dir=cache_dir)
            rng = np.random.default_rng([rep, n_topics, 7])
            for panel, mech, eps, gamma in todo:
                noisy, guarantee, sigma, sens = release(mech, model, corpus, W, eps, grid.delta, gamma,
                                                        samples[gamma], rng)
                store.write(_key((panel, mech, eps, gamma), corpus_name, model_name, n_topics, rep),
                            metrics(noisy, W, min(grid.top_n, corpus.n_words)), delta=grid.delta,
                            guarantee=guarantee, sigma=sigma, sensitivity=sens)
            progress(f"agnostic {model_name} K={n_topics} repeat {rep}: {len(todo)} rows "
                     f"(pairs {sample.h}, {sample.wall_seconds:.0f} s)")


def _key(combo, corpus_name, model_name, n_topics, rep) -> dict:
    panel, mech, eps, gamma = combo
    return {"panel": panel, "corpus": corpus_name, "mechanism": mech, "model": model_name, "n_topics": n_topics,
            "epsilon": eps, "gamma": gamma, "repeat": rep}
