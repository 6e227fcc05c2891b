"""The registry of mechanisms: each once, with its guarantee, what it supports and how it is built.

Names, one-line summaries, units and neighbour relations come from :mod:`topicdp._names` (pure Python, so
the command line builds its ``--help`` from them without numpy); this module adds the factory that runs
each one on a prepared corpus. Every factory records its releases in the pipeline's ledger, which already
holds the unit count and the DP vocabulary: the report composes them all (:mod:`topicdp.pipeline.compose`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from joblib import effective_n_jobs

from .._names import (FORECAST_MECHANISMS, MECHANISM_NEIGHBOURS, MECHANISM_SUMMARIES, MECHANISM_UNITS,
                      RIGOROUS_MECHANISMS)
from .request import AgnosticOptions, ReleaseRequest

if TYPE_CHECKING:
    import numpy as np

    from ..corpus import Corpus
    from ..rdp import PrivacyLedger
    from ..release import PrivateRelease
    from ..streaming import StreamingCorpus


@dataclass
class RunContext:
    """What a mechanism's factory is given: the release's parameters, the topics' budget, the prepared corpus,
    the ledger of the release, the unit count (stated or DP) and public inputs (start topics, reference).

    The pipeline builds it from a request (:meth:`from_request`); the comparison harness builds it directly,
    so that both run every mechanism the same way.
    """

    n_topics: int
    unit: str
    neighbours: str
    epsilon: float
    delta: float
    corpus: "Corpus | StreamingCorpus"
    ledger: "PrivacyLedger"
    n_units: int
    seed: int | None = None
    n_jobs: int = 1
    agnostic: AgnosticOptions = field(default_factory=AgnosticOptions)
    start: "np.ndarray | None" = None
    reference: "Corpus | None" = None
    reference_name: str | None = None
    client: object = None  # a dask.distributed Client running a streamed corpus' passes, or None

    @classmethod
    def from_request(cls, request: ReleaseRequest, epsilon: float, delta: float, corpus: "Corpus",
                     ledger: "PrivacyLedger", n_units: int) -> "RunContext":
        return cls(request.n_topics, str(request.unit), str(request.neighbours), epsilon, delta, corpus, ledger,
                   n_units, request.seed, effective_n_jobs(request.n_jobs), request.agnostic,
                   reference_name=request.reference)

    @property
    def vocabulary_source(self) -> str:
        # the pipeline states the vocabulary's status itself (compose); the producers see it as given
        return "public"


@dataclass(frozen=True)
class Mechanism:
    """One mechanism of ``guarantee="dp"``."""

    name: str
    summary: str
    forecast: bool
    neighbours: tuple[str, ...]
    units: tuple[str, ...]
    run: "Callable[[RunContext], PrivateRelease]"


def dp_vem_model(ctx: RunContext):
    """The dp-vem estimator of a request (also run on the public reference by the simulation)."""
    from ..variational import DPVariationalLDA

    return DPVariationalLDA(ctx.n_topics, epsilon=ctx.epsilon, delta=ctx.delta, unit=ctx.unit,
                            neighbours=ctx.neighbours, n_iterations=DP_VEM_ITERATIONS[ctx.start is not None],
                            init=ctx.start, n_jobs=ctx.n_jobs, random_state=ctx.seed)


def _dp_vem(ctx: RunContext) -> "PrivateRelease":
    return dp_vem_model(ctx).fit(ctx.corpus, vocabulary_source=ctx.vocabulary_source, ledger=ctx.ledger,
                                 client=ctx.client).release_


#: dp-vem's iterations: 7 from a random start (4 of them an over-complete warm-up), 2 from public topics (the start
#: has done most of the work)
DP_VEM_ITERATIONS = {False: 7, True: 2}


def _output_perturbation(kind: str):
    def run(ctx: RunContext) -> "PrivateRelease":
        from ..adapters import make_model
        from ..agnostic import TopicDP

        a = ctx.agnostic
        privatizer = TopicDP(make_model(a.model, ctx.n_topics, a.model_seed), ctx.epsilon, ctx.delta, unit=ctx.unit,
                             neighbours=ctx.neighbours, sensitivity="global", mechanism=kind,
                             calibration=a.calibration, secure_noise=a.secure_noise, random_state=ctx.seed)
        return privatizer.fit(ctx.corpus, vocabulary_source=ctx.vocabulary_source, keep_nonprivate=a.keep_nonprivate,
                              ledger=ctx.ledger).release_
    return run


def _spectral(configuration: int):
    def run(ctx: RunContext) -> "PrivateRelease":
        from ..spectral import SpectralDP

        # n_units: the stated count the pipeline checked against its census (before filtering); the moments are
        # normalised by it, with units emptied by the vocabulary as zero contributions
        model = SpectralDP(n_topics=ctx.n_topics, alpha0=1.0, configuration=configuration, epsilon=ctx.epsilon,
                           delta=ctx.delta, unit=ctx.unit, random_state=ctx.seed, n_units=ctx.n_units)
        return model.fit(ctx.corpus, vocabulary_source=ctx.vocabulary_source, ledger=ctx.ledger).release_
    return run


def _dpsvi(ctx: RunContext) -> "PrivateRelease":
    from ..baselines import DPSVI

    # the sampling rate from the DP (or stated) count, never from the corpus: q must not depend on the data
    rate = min(1.0, DPSVI_BATCH / max(ctx.n_units, 1))
    model = DPSVI(ctx.n_topics, epsilon=ctx.epsilon, delta=ctx.delta, sampling_rate=rate, random_state=ctx.seed)
    return model.fit(ctx.corpus, vocabulary_source=ctx.vocabulary_source, ledger=ctx.ledger).release_


#: DP-SVI's expected batch size; its Poisson sampling rate is this over the unit count
DPSVI_BATCH = 100

_RUNNERS: "dict[str, Callable[[RunContext], PrivateRelease]]" = {
    "dp-vem": _dp_vem,
    "gaussian-global": _output_perturbation("gaussian"),
    "laplace": _output_perturbation("laplace"),
    **{f"spectral-config-{c}": _spectral(c) for c in (1, 2, 3, 4)},
    "dpsvi": _dpsvi,
}

#: every mechanism of ``guarantee="dp"``, by its one name (the command line's, the report's and compare's)
MECHANISMS: dict[str, Mechanism] = {
    name: Mechanism(name, MECHANISM_SUMMARIES[name], name in FORECAST_MECHANISMS, MECHANISM_NEIGHBOURS[name],
                    MECHANISM_UNITS[name], _RUNNERS[name])
    for name in RIGOROUS_MECHANISMS
}
