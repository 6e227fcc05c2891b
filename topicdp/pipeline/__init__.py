"""The release pipeline: request -> plan (public facts only) -> execution -> :class:`topicdp.PrivateRelease`.

The one place where a release's budget is split, its vocabulary policy applied, its mechanism chosen and
its report composed. ``topicdp privatize`` builds a :class:`ReleaseRequest` from its flags and calls
:func:`release`; Python users do the same:

>>> from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy, release
>>> from topicdp.datasets import themed_vocabulary
>>> request = ReleaseRequest(CorpusSource("themed"), VocabularyPolicy.public(themed_vocabulary()),
...                          epsilon=3.0, delta=1e-6, unit="user", seed=0)
>>> result = release(request, echo=lambda line: None)
>>> result.decision.mechanism, result.release.report.neighbours
('dp-vem', 'add-remove')

:func:`release` is :func:`prepare` (the public reference read once, the plan) then :func:`release_prepared`; a
caller releasing one corpus many times (``topicdp compare``, a series, a choice of K) prepares once, and may hold
the private corpus itself (:class:`InMemorySource` over :class:`Records` it read and tokenised once). Public facts
a caller builds the same way as a release: :func:`reference_records` and :func:`reference_vocabulary` (the public
reference and its words), :func:`bounded` (a corpus under a source's contribution bounds), :func:`noise_refusal`
(what a forced release's skipped refusal says).

Decisions read only public facts: the flags, public inputs (a word list, a reference corpus) and DP outputs
whose budget the report composes (a DP count of the units when the owner states none, the DP vocabulary).
"""

from .roads import MECHANISMS, RANDOM_DP, Road
from .plan import Budget, BudgetSplit, Decision, ReleasePlan, UnitCount, decide, plan_request, split_budget
from ..corpus import user_selected
from .request import CorpusSource, ReleaseRequest, VocabularyPolicy, resolve_road
from .run import (PipelineResult, Prepared, ReleaseRefused, noise_refusal, prepare, reference_records,
                  reference_vocabulary, release, release_prepared)
from .sources import InMemorySource, Records, bounded, group_by_user, read_records

__all__ = ["Budget", "BudgetSplit", "CorpusSource", "Decision", "InMemorySource", "MECHANISMS", "PipelineResult",
           "Prepared", "RANDOM_DP", "Records", "ReleasePlan", "ReleaseRefused", "ReleaseRequest", "Road", "UnitCount",
           "VocabularyPolicy", "bounded", "decide", "group_by_user", "noise_refusal", "plan_request", "prepare",
           "read_records", "reference_records", "reference_vocabulary", "release", "release_prepared", "resolve_road",
           "split_budget", "user_selected"]
