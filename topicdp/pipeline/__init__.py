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

Decisions read only public facts: the flags, public inputs (a word list, a reference corpus) and DP outputs
whose budget the report composes (a DP count of the units when the owner states none, the DP vocabulary).
"""

from .mechanisms import MECHANISMS, Mechanism
from .plan import Budget, BudgetSplit, Decision, ReleasePlan, UnitCount, decide, plan_request, split_budget
from ..corpus import user_selected
from .request import CorpusSource, ReleaseRequest, VocabularyPolicy, resolve_road
from .run import PipelineResult, ReleaseRefused, release
from .sources import group_by_user, read_records

__all__ = ["Budget", "BudgetSplit", "CorpusSource", "Decision", "MECHANISMS", "Mechanism",
           "PipelineResult", "ReleasePlan", "ReleaseRefused", "ReleaseRequest", "UnitCount", "VocabularyPolicy",
           "decide", "group_by_user", "plan_request", "read_records", "release", "resolve_road", "split_budget",
           "user_selected"]
