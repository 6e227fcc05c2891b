"""The release pipeline: request -> plan (public facts only) -> execution -> :class:`topicdp.PrivateRelease`, the one
place where the budget is split, the vocabulary policy applied, the mechanism chosen and the report composed.
Decisions read only public facts: the flags, public inputs and DP outputs whose budget the report composes.

>>> from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy, release
>>> from topicdp.datasets import themed_vocabulary
>>> request = ReleaseRequest(CorpusSource("themed"), VocabularyPolicy.public(themed_vocabulary()),
...                          epsilon=3.0, delta=1e-6, unit="user", seed=0)
>>> result = release(request, echo=lambda line: None)
>>> result.decision.mechanism, result.release.report.neighbours
('dp-vem', 'add-remove')

:func:`release` is :func:`prepare` then :func:`release_prepared`; a caller releasing one corpus many times
(``topicdp compare``, a series, a choice of K) prepares once, and may hold the corpus itself (:class:`InMemorySource`).
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
