"""``compare``: run a grid of mechanisms x models x epsilon x gamma x size x repeats, write CSV and plots."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .._files import atomic_write
from .._names import DEFAULT_DELTA
from .agnostic import MECHANISMS, run_agnostic
from .plots import plot_all
from .store import ResultStore


@dataclass
class CompareGrid:
    """What to compare. ``quick()`` and ``full()`` give the two documented grids.

    Panels of the agnostic road: ``eps`` (metrics vs epsilon at gamma = ``gamma``, K = ``n_topics``),
    ``gamma`` (vs gamma at epsilon = ``epsilon``), ``size`` (vs K = m = n for ``size_model``).
    The spectral panel compares configurations 1-4 with DP-VI on synthetic LDA (see
    :mod:`topicdp.experiments.spectral`).
    """

    models: tuple = ("gensim-lda", "gensim-lsi", "gensim-hdp")
    mechanisms: tuple = MECHANISMS
    epsilons: tuple = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)
    table_epsilons: tuple = (1.0, 3.0, 10.0)  # the coherence/perplexity table's columns
    gammas: tuple = (0.1, 0.15, 0.2, 0.22)
    sizes: tuple = (2, 4, 6, 8, 10)
    size_model: str = "gensim-lsi"
    n_topics: int = 10
    epsilon: float = 3.0
    gamma: float = 0.1
    delta: float = DEFAULT_DELTA
    top_n: int = 10
    repeats: int = 2
    n_jobs: int = 2
    spectral: dict = field(default_factory=lambda: {
        "n_docs": (10_000, 100_000), "n_words": 100, "n_topics": 5, "alpha0s": (0.1, 1.0),
        "epsilons": (1.0, 3.0, 10.0, 30.0, 100.0), "dpsvi_iterations": 200, "repeats": 2,
    })

    @classmethod
    def quick(cls) -> "CompareGrid":
        return cls(models=("gensim-lda",), epsilons=(1.0, 3.0, 10.0), table_epsilons=(3.0,), gammas=(0.22,),
                   sizes=(2, 3),
                   size_model="gensim-lda", n_topics=3, gamma=0.22, repeats=2, spectral={
                       "n_docs": (2_000,), "n_words": 200, "n_topics": 3, "alpha0s": (1.0,),
                       "epsilons": (1.0, 10.0), "dpsvi_iterations": 30, "repeats": 1})

    @classmethod
    def full(cls) -> "CompareGrid":
        return cls()

    def agnostic_tasks(self):
        """(model, K, [(panel, epsilons, gammas), ...]) for every fit the agnostic panels need."""
        tasks = []
        for model in self.models:
            panels = [("eps", self.epsilons, (self.gamma,)), ("gamma", (self.epsilon,), self.gammas)]
            tasks.append((model, self.n_topics, panels))
        for k in self.sizes:
            panel = [("size", (self.epsilon,), (self.gamma,))]
            if k == self.n_topics and self.size_model in self.models:
                tasks[self.models.index(self.size_model)][2].extend(panel)
            else:
                tasks.append((self.size_model, k, panel))
        return tasks


def compare(corpus, out_dir, *, grid: CompareGrid | None = None, corpus_name: str = "corpus", heldout=None,
            heldout_texts=None, spectral: bool = True, plots: bool = True, verbose: bool = True) -> dict:
    """Run ``grid`` on ``corpus`` and write ``results.csv``, ``grid.json`` and PNG plots into ``out_dir``.

    Rows already in ``out_dir/results.csv`` are kept and their tasks skipped (resume); sampled
    sensitivities are cached in ``out_dir/cache``. With ``heldout`` (a Corpus on the same vocabulary)
    and ``heldout_texts`` (its token lists), the coherence/perplexity table is added (``table.md``).

    Returns
    -------
    dict
        ``{"csv": path, "plots": [paths], "seconds": float}``.
    """
    grid = grid or CompareGrid.full()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "grid.json", json.dumps(asdict(grid), indent=1, default=list))
    store = ResultStore(out / "results.csv")
    start = time.perf_counter()

    def progress(msg: str) -> None:
        if verbose:
            print(f"[{time.perf_counter() - start:7.1f} s] {msg}", file=sys.stderr, flush=True)

    cache = out / "cache"
    run_agnostic(store, corpus, corpus_name, grid, progress, cache_dir=cache)
    if heldout is not None:
        from .table import format_table, run_table

        run_table(store, corpus, heldout, heldout_texts, corpus_name, grid, progress, cache_dir=cache)
        atomic_write(out / "table.md", format_table(store.rows()) + "\n")
    if spectral:
        from .spectral import run_spectral

        run_spectral(store, grid, progress)
    written = plot_all(store.rows(), out) if plots else []
    return {"csv": store.path, "plots": written, "seconds": time.perf_counter() - start}
