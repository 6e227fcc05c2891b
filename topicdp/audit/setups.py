"""Audit setups: what to audit, as a library. ``factory(options: SetupOptions) -> AuditSetup``.

:data:`SETUPS` maps names to factories (:func:`register_setup` adds more); :class:`SetupOptions` states every option
once (``topicdp audit`` builds its flags from it). Each factory builds a corpus, a canary pair (D, D'), the mechanism
as the library runs it and its claim: ``synthetic-gaussian`` (noise on a statistic of proven sensitivity),
``topicdp-global`` (sensitivity sqrt(2K), DP for every pair: only the noise is redrawn), ``topicdp-sampled`` (random
DP with respect to P, not DP: ``distribution="private"``, TopicDP's P, samples sigma(D) and sigma(D') each on its own
side, ``"public"`` resamples a disjoint reference and shares sigma; ``n_pairs`` below Thm. 1's h is the insecure
testing mode) and ``spectral-1`` (configuration 1 at document level, rerun per trial in canonical topic order; a
failed fatal precondition releases the uniform matrix, also an observable output). The noisy matrix is scored
(clipping its rows is post-processing). Corpora: ``embedded`` (gensim's Lee corpus, public vocabulary) or a JSON
Lines path (users with at least ``max_docs_per_user`` documents, bounded; the subset's frequent words treated as
public); canaries ``typical``, ``outlier`` (saturates the bounds with fresh words), ``long-document`` (added after
bounding: no audited claim relies on the token bound).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.sparse as sp

from .._names import UNITS
from .._validation import check_int, check_option
from .canaries import (CANARIES, NEIGHBOURS, BoundedContributionSum, CanaryPair, CorpusData, make_canary,
                       synthetic_corpus)
from .noise import DiscreteGaussianNoise, GaussianNoise, analytic_sigma, exact_epsilon
from .runner import AuditSetup, check_fields, cli_field

DISTRIBUTIONS = ("private", "public")
NOISES = ("gaussian", "discrete-gaussian")
OUTLIER_WORDS = 10
_TOPIC_MODELS = "topic-model setups (topicdp-global, topicdp-sampled, spectral-1)"


@dataclass(frozen=True)
class SetupOptions:
    """Every option of the audit setups, checked on construction (:func:`~topicdp.audit.runner.check_fields`); the
    defaults are stated only here (variants: :func:`dataclasses.replace`)."""

    epsilon: float = cli_field(1.0, "claimed epsilon", low=0.0)
    delta: float = cli_field(1e-5, "claimed delta", low=0.0, high=1.0, low_open=False)
    sigma_factor: float = cli_field(1.0, "multiply the calibrated sigma (e.g. 0.333 under-noises on purpose)", low=0.0)
    canary: str = cli_field("typical", "canary kind", choices=CANARIES)
    neighbours: str | None = cli_field(None, "neighbour relation (None: the setup's own, add-remove for "
                                        "synthetic-gaussian, replace-one otherwise)", choices=NEIGHBOURS, type=str)
    noise: str = cli_field("gaussian", "noise sampler of synthetic-gaussian", choices=NOISES)
    corpus: str = cli_field("embedded", "'embedded' (gensim's Lee corpus) or a JSON Lines path with 'text' and "
                             "'user' fields", group=_TOPIC_MODELS)
    n_users: int = cli_field(30, "users (Lee: documents) in the audited subset", group=_TOPIC_MODELS, low=3)
    max_docs_per_user: int = cli_field(20, "contribution bound, documents per user", group=_TOPIC_MODELS, low=1)
    max_tokens_per_doc: int = cli_field(300, "contribution bound, tokens per document", group=_TOPIC_MODELS, low=3)
    max_features: int = cli_field(1000, "vocabulary size", group=_TOPIC_MODELS, low=10)
    corpus_seed: int = cli_field(0, "seed of the user subset and the bounding", group=_TOPIC_MODELS, low=0)
    canary_seed: int = cli_field(1, "seed of the canary draw", group=_TOPIC_MODELS, low=0)
    model: str = cli_field("gensim-lda", "topic model of the TopicDP setups", group=_TOPIC_MODELS)
    n_topics: int = cli_field(5, "number of topics K", group=_TOPIC_MODELS, flags=("--topics",),
                               hidden_flags=("--n-topics",), low=2)
    model_seed: int = cli_field(0, "seed of the topic model", group=_TOPIC_MODELS, low=0)
    gamma: float = cli_field(0.22, "random-DP gamma of topicdp-sampled (0.22: h=49)", group=_TOPIC_MODELS, low=0.0,
                              high=0.5)
    n_pairs: int | None = cli_field(None, "override h of topicdp-sampled; below Thm. 1's h this is the insecure "
                                     "testing mode", type=int, group=_TOPIC_MODELS, low=1)
    distribution: str = cli_field("private", "P of topicdp-sampled: resample the private corpus (TopicDP's default) "
                                   "or a disjoint public reference", choices=DISTRIBUTIONS, group=_TOPIC_MODELS)
    sampler_seed: int = cli_field(0, "seed of the neighbour-pair draws", group=_TOPIC_MODELS, low=0)
    cache_dir: str | None = cli_field(None, "cache sampled sensitivities here", type=str, group=_TOPIC_MODELS)
    alpha0: float = cli_field(1.0, "Dirichlet alpha0 of spectral-1", group=_TOPIC_MODELS, low=0.0)
    n_jobs: int = cli_field(1, "parallel workers (sensitivity sampling, pipeline trials)", low=-1)

    def __post_init__(self) -> None:
        check_fields(self)


# -- corpora ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusChoice:
    """Which corpus an audit runs on (module docstring); hashable, so loads are cached."""

    source: str
    n_users: int
    max_docs_per_user: int
    max_tokens_per_doc: int
    max_features: int
    seed: int

    @classmethod
    def from_options(cls, options: SetupOptions) -> "CorpusChoice":
        return cls(source=options.corpus, n_users=options.n_users, max_docs_per_user=options.max_docs_per_user,
                   max_tokens_per_doc=options.max_tokens_per_doc, max_features=options.max_features,
                   seed=options.corpus_seed)

    def describe(self) -> str:
        if self.source == "embedded":
            return (f"embedded Lee corpus: {self.n_users} documents (one per user) drawn with seed {self.seed}, "
                    f"<= {self.max_tokens_per_doc} tokens/doc, vocabulary: {self.max_features} most frequent words "
                    "of the whole Lee corpus (min_df=2, max_df=0.5)")
        return (f"{Path(self.source).name}: {self.n_users} users drawn with seed {self.seed} among users with >= "
                f"{self.max_docs_per_user} documents; <= {self.max_docs_per_user} random documents/user, <= "
                f"{self.max_tokens_per_doc} tokens/doc; vocabulary: {self.max_features} most frequent words of the "
                "subset (min_df=3, max_df=0.5), treated as public")


def _bound(corpus, choice: CorpusChoice):
    per_user = choice.max_docs_per_user if choice.source != "embedded" else None
    return corpus.bound(per_user, choice.max_tokens_per_doc, random_state=choice.seed)


@lru_cache(maxsize=8)
def load_corpus(choice: CorpusChoice, reference: bool = False):
    """The private corpus of ``choice`` (or, with ``reference=True``, its disjoint public reference)."""
    from ..corpus import Corpus, embedded_texts, read_jsonl_records

    rng = np.random.default_rng(choice.seed)
    if choice.source == "embedded":
        full = Corpus.from_texts(embedded_texts(), min_df=2, max_df=0.5, max_features=choice.max_features)
        if 2 * choice.n_users > full.n_users:
            raise ValueError(f"n_users must be at most {full.n_users // 2} for the embedded corpus, got {choice.n_users}")
        order = rng.permutation(full.n_users)
        picked = order[choice.n_users : 2 * choice.n_users] if reference else order[: choice.n_users]
        return _bound(full.subset_users(np.sort(picked)), choice)
    path = Path(choice.source)
    if not path.exists():
        raise FileNotFoundError(f"corpus file not found: {path}")
    counts: collections.Counter = collections.Counter(user for _, user in read_jsonl_records(path))
    eligible = sorted(u for u, n in counts.items() if n >= choice.max_docs_per_user)
    if len(eligible) < 2 * choice.n_users:
        raise ValueError(f"only {len(eligible)} users have >= {choice.max_docs_per_user} documents; "
                         f"need 2 x n_users = {2 * choice.n_users}")
    order = rng.permutation(len(eligible))
    private = [eligible[i] for i in np.sort(order[: choice.n_users])]
    corpus = _bound(Corpus.from_jsonl(path, users=private, min_df=3, max_df=0.5, max_features=choice.max_features),
                    choice)
    if not reference:
        return corpus
    public = [eligible[i] for i in np.sort(order[choice.n_users : 2 * choice.n_users])]
    return _bound(Corpus.from_jsonl(path, users=public, vocabulary=list(corpus.vocabulary)), choice)


def _with_vocabulary(corpus, vocabulary):
    """``corpus`` with zero columns appended so that its vocabulary is ``vocabulary`` (a prefix extension)."""
    from ..corpus import Corpus

    V = corpus.n_words
    if list(vocabulary[:V]) != list(corpus.vocabulary):
        raise ValueError("the reference corpus' vocabulary must be a prefix of the canary pair's")
    extra = len(vocabulary) - V
    if extra == 0:
        return corpus
    X = sp.hstack([corpus.X, sp.csr_matrix((corpus.n_docs, extra), dtype=corpus.X.dtype)], format="csr")
    return Corpus.from_matrix(X, list(vocabulary), corpus.doc_users)


# -- canaries --------------------------------------------------------------------------------------


def build_canary(kind: str, corpus, choice: CorpusChoice, *, unit: str = "user", neighbours: str = "replace-one",
                 random_state: int = 1) -> CanaryPair:
    """The canary pair of ``kind`` on ``corpus`` (user- or document-level records)."""
    unit = check_option(unit, "unit", UNITS)
    records = corpus.doc_users if unit == "user" else np.arange(corpus.n_docs, dtype=np.int64)  # a document each
    data = CorpusData(corpus.X, records, list(corpus.vocabulary))
    kwargs = {"n_docs": 1 if unit == "document" else choice.max_docs_per_user, "doc_length": choice.max_tokens_per_doc,
              "n_words": OUTLIER_WORDS} if kind == "outlier" else {}
    return make_canary(kind, data, neighbours=neighbours, random_state=random_state, **kwargs)


def _neighbours(options: SetupOptions, allowed: tuple) -> str:
    """The setup's neighbour relation: ``options.neighbours``, or its own (``allowed[0]``) when None."""
    neighbours = options.neighbours or allowed[0]
    if neighbours not in allowed:
        raise ValueError(f"this setup's claim is for {' or '.join(allowed)} neighbours, got {neighbours!r}")
    return neighbours


def _canary_pair(options: SetupOptions, allowed: tuple, unit: str = "user"):
    choice = CorpusChoice.from_options(options)
    return choice, build_canary(options.canary, load_corpus(choice), choice, unit=unit,
                                neighbours=_neighbours(options, allowed), random_state=options.canary_seed)


def _topicdp_pair(options: SetupOptions, allowed: tuple):
    """A TopicDP setup's corpus choice, canary pair, its corpora D and D' and the model of ``options``."""
    from ..adapters import make_model
    from ..corpus import Corpus

    choice, pair = _canary_pair(options, allowed)
    D, D_prime = pair.as_corpora(Corpus.from_matrix)
    k = check_int(options.n_topics, "n_topics", low=2, high=D.n_words - 1)
    return choice, pair, D, D_prime, make_model(options.model, k, options.model_seed)


# -- synthetic ---------------------------------------------------------------------------------------


def synthetic_setup(options: SetupOptions) -> AuditSetup:
    """Gaussian (or discrete Gaussian) perturbation of :class:`BoundedContributionSum` at the analytic sigma
    (Balle & Wang 2018, Thm. 8) for its proven sensitivity, times ``sigma_factor``."""
    corpus = synthetic_corpus(random_state=0)
    neighbours = _neighbours(options, NEIGHBOURS)
    pair = make_canary(options.canary, corpus, neighbours=neighbours, random_state=1)
    f = BoundedContributionSum(n_rows=5)
    W_out, W_in = f(pair.D), f(pair.D_prime)
    sensitivity = f.sensitivity(neighbours)
    sigma = analytic_sigma(options.epsilon, options.delta, sensitivity)
    used = sigma * options.sigma_factor
    noise = DiscreteGaussianNoise(used, sensitivity) if options.noise == "discrete-gaussian" else GaussianNoise(used)
    return AuditSetup(
        mechanism=f"synthetic {options.noise} output perturbation", epsilon=options.epsilon, delta=options.delta,
        canary=pair, W_out=W_out, W_in=W_in, noise=noise, details={
            "sigma_calibrated": sigma,
            "sigma_used": used,
            "sigma_factor": options.sigma_factor,
            "sensitivity": sensitivity,
            "true_epsilon_worst_case": exact_epsilon(sensitivity / used, options.delta),
            "true_epsilon_this_pair": exact_epsilon(float(np.linalg.norm(W_in - W_out)) / used, options.delta),
        },
    )


# -- TopicDP ---------------------------------------------------------------------------------------


def _topicdp_details(choice: CorpusChoice, model, report, distance: float, factor: float, s_out: float, s_in: float,
                     **extra) -> dict:
    """What a TopicDP setup records: the corpus, the model, the claim, the pair's distance, the noise of each side."""
    return {"corpus": choice.describe(), "model": model.describe(), "guarantee": report.guarantee,
            "sensitivity_claimed": report.sensitivity, "distance": distance, "sigma_factor": factor, "sigma_out": s_out,
            "sigma_in": s_in, **extra,
            "released_object": "PrivateRelease.noisy (before clipping/renormalisation, a post-processing)"}


def topicdp_global_setup(options: SetupOptions) -> AuditSetup:
    """TopicDP with the provable global sensitivity sqrt(2K) (approx-DP for any neighbours)."""
    from ..agnostic import TopicDP

    choice, pair, D, D_prime, model = _topicdp_pair(options, NEIGHBOURS)
    eps, delta = options.epsilon, options.delta
    rel = TopicDP(model, epsilon=eps, delta=delta, sensitivity="global", neighbours=_neighbours(options, NEIGHBOURS),
                  random_state=0).fit(D, keep_nonprivate=True).release_  # states the relation of the audited pair
    W_out, W_in = rel.nonprivate, model.fit_topic_word(D_prime)
    factor = options.sigma_factor
    assert rel.report.sigma is not None and rel.report.sensitivity is not None  # global Gaussian: both stated
    sigma = rel.report.sigma * factor
    distance = float(np.linalg.norm(W_in - W_out))
    details = _topicdp_details(choice, model, rel.report, distance, factor, sigma, sigma,
                               sensitivity_method=rel.report.sensitivity_method,
                               covered=distance <= rel.report.sensitivity, sigma_calibrated=rel.report.sigma,
                               true_epsilon_this_pair=exact_epsilon(distance / sigma, delta))
    label = "TopicDP global sensitivity sqrt(2K)" + ("" if factor == 1.0 else f" x sigma {factor:g} (under-noised)")
    return AuditSetup(mechanism=f"{label} [{model.name}, K={model.n_topics}]", epsilon=eps, delta=delta,
                      canary=pair, W_out=W_out, W_in=W_in, noise=GaussianNoise(sigma), details=details)


def topicdp_sampled_setup(options: SetupOptions) -> AuditSetup:
    """TopicDP with the sampled sensitivity (random DP); sigma(D) and sigma(D') each from their own sampling."""
    from ..agnostic import TopicDP
    from ..samplers import PRIVATE_ORACLE, SensitivitySampling
    from ..samplers.sizing import sample_size

    choice, pair, D, D_prime, model = _topicdp_pair(options, ("replace-one",))
    distribution = options.distribution
    eps, delta, gamma, n_pairs = options.epsilon, options.delta, options.gamma, options.n_pairs
    h_needed = sample_size(gamma)[1]
    reference = None
    if distribution == "public":
        reference = _with_vocabulary(load_corpus(choice, reference=True), D.vocabulary)

    sampling = SensitivitySampling(PRIVATE_ORACLE if reference is None else reference, gamma, n_pairs=n_pairs,
                                   insecure_testing=n_pairs is not None and n_pairs < h_needed,
                                   random_state=options.sampler_seed, cache_dir=options.cache_dir)

    def released(corpus):
        return TopicDP(model, epsilon=eps, delta=delta, sampling=sampling, n_jobs=options.n_jobs, random_state=0).fit(
            corpus, keep_nonprivate=True).release_

    rel_out = released(D)
    W_out = rel_out.nonprivate
    if distribution == "public" and D_prime.n_users == D.n_users:
        # Delta_s depends only on (P, N, vocabulary, model, sampler seed): identical for D and D'
        W_in, rep_in = model.fit_topic_word(D_prime), rel_out.report
    else:
        rel_in = released(D_prime)
        W_in, rep_in = rel_in.nonprivate, rel_in.report
    rep_out = rel_out.report
    factor = options.sigma_factor
    s_out, s_in = rep_out.sigma * factor, rep_in.sigma * factor
    distance = float(np.linalg.norm(W_in - W_out))
    sample = rep_out.details["sensitivity_sample"]
    details = _topicdp_details(
        choice, model, rep_out, distance, factor, s_out, s_in, gamma=gamma, h=sample["h"], k=sample["k"],
        h_required=h_needed, distribution=distribution, distribution_note=(
            "P resamples the private corpus (TopicDP's choice): sigma depends on the data" if distribution == "private"
            else "P resamples a disjoint public reference corpus: sigma is data independent"),
        delta_s_out=rep_out.sensitivity, delta_s_in=rep_in.sensitivity,
        covered=distance <= min(rep_out.sensitivity, rep_in.sensitivity), sigma_ratio=s_in / s_out,
        true_epsilon_this_pair=exact_epsilon(distance / s_out, delta) if s_in == s_out else None,
        true_epsilon_this_pair_at_sigma_out=exact_epsilon(distance / s_out, delta),
        sensitivity_sample_out=sample, sensitivity_sample_in=rep_in.details["sensitivity_sample"])
    noise = GaussianNoise(s_out) if s_in == s_out else (GaussianNoise(s_out), GaussianNoise(s_in))
    hs = f"h={sample['h']}" + (" INSECURE" if sample["h"] < h_needed else "")
    return AuditSetup(
        mechanism=f"TopicDP sampled sensitivity (random DP, gamma={gamma:g}, {hs}, P={distribution}) "
        f"[{model.name}, K={model.n_topics}]",
        epsilon=eps, delta=delta, canary=pair, W_out=W_out, W_in=W_in, noise=noise, details=details)


# -- spectral configuration 1 --------------------------------------------------------------------


@dataclass
class SpectralRelease:
    """One run of :class:`~topicdp.spectral.DPSpectralMoments` on a canary dataset (picklable), in canonical topic order; a
    fatal precondition failure returns the uniform matrix."""

    n_topics: int
    alpha0: float
    epsilon: float
    delta: float
    configuration: int = 1

    def fit(self, data, rng):
        """The fitted estimator on ``data`` with the noise drawn from ``rng``."""
        from ..spectral import DPSpectralMoments

        return DPSpectralMoments(self.n_topics, self.alpha0, self.configuration, epsilon=self.epsilon,
                                 delta=self.delta, unit="document", random_state=rng).fit(data.X)

    def __call__(self, data, rng: np.random.Generator) -> np.ndarray:
        from ..topics import canonical_order
        from ..spectral import PreconditionError

        try:
            W = self.fit(data, rng).topic_word_
        except PreconditionError:
            return np.full((self.n_topics, data.X.shape[1]), 1.0 / data.X.shape[1])
        return W[canonical_order(W)]


def spectral_reference(data, n_topics: int, alpha0: float) -> np.ndarray:
    """Non-private spectral LDA (seed 0), canonical order: the f of the projection distinguisher."""
    from ..topics import canonical_order
    from ..spectral import SpectralLDA

    W = SpectralLDA(n_topics, alpha0, random_state=0).fit(data.X).topic_word_
    return W[canonical_order(W)]


def spectral1_setup(options: SetupOptions) -> AuditSetup:
    """DPSpectralMoments configuration 1 at document level, rerun per trial."""
    from ..spectral import PreconditionError

    choice, pair = _canary_pair(options, ("replace-one",), unit="document")
    k, alpha0 = options.n_topics, options.alpha0
    release = SpectralRelease(k, alpha0, options.epsilon, options.delta, 1)
    fitted = []
    for data in (pair.D, pair.D_prime):
        try:
            fitted.append(release.fit(data, 0))
        except PreconditionError as exc:
            raise ValueError(f"spectral configuration 1 does not run on this corpus/epsilon ({exc}); use more "
                             "documents, a larger epsilon or fewer topics") from exc
    rep = fitted[0].report_
    W_out, W_in = spectral_reference(pair.D, k, alpha0), spectral_reference(pair.D_prime, k, alpha0)
    details = {
        "corpus": choice.describe(),
        "unit": rep.unit,
        "guarantee": rep.guarantee,
        "claimed_epsilon_report": rep.epsilon,
        "claimed_delta_report": rep.delta,
        "n_documents": rep.details["n_documents"],
        "n_short_documents": fitted[0].release_.diagnostics["n_short_documents"],  # the auditor's own run
        **{key: rep.details[key] for key in ("Delta2", "Delta3", "m2_combined_sigma")},
        "distance": float(np.linalg.norm(W_in - W_out)),
        "distance_note": "between the non-private spectral fits (the projection direction); the mechanism's "
        "sensitivities are on M2/M3, not on the topics",
        "checks_on_D": [(c.name, c.passed) for c in rep.checks],
    }
    return AuditSetup(mechanism=f"DPSpectralMoments configuration 1 (document level) [k={k}, alpha0={alpha0:g}]",
                      epsilon=float(rep.epsilon), delta=float(rep.delta), canary=pair, release=release,
                      D_out=pair.D, D_in=pair.D_prime, reference=(W_out, W_in), details=details)


# -- registration ------------------------------------------------------------------------------------

SETUPS: dict[str, Callable[[SetupOptions], AuditSetup]] = {
    "synthetic-gaussian": synthetic_setup,
    "topicdp-global": topicdp_global_setup,
    "topicdp-sampled": topicdp_sampled_setup,
    "spectral-1": spectral1_setup,
}


def register_setup(name: str, factory: Callable[[SetupOptions], AuditSetup]) -> None:
    """Make ``name`` an audit setup (for ``topicdp audit --setup name``: call before building the parser)."""
    SETUPS[name] = factory


__all__ = [
    "SetupOptions", "SETUPS", "register_setup", "CorpusChoice", "load_corpus", "build_canary", "synthetic_setup",
    "topicdp_global_setup", "topicdp_sampled_setup", "spectral1_setup", "SpectralRelease", "spectral_reference"
]
