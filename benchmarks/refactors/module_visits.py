"""Follow a release request through the package: the modules it visits, in order, and the returns to a module left.

A *stay* is a maximal run of consecutive calls, in one module of ``topicdp``, of functions that are handed the
request: a parameter (or ``self``) that is the :class:`~topicdp.pipeline.ReleaseRequest`, or an object holding it
(the plan). A *return* is a stay in a module the request had already left. Calls that do not receive the request
(validators, numerical kernels) are not followed: they are where the work is done, not where the request travels.

The trace is taken at run time (``sys.setprofile``), so it counts what runs, not what the source could call, on
two releases: ``themed``, the release of ``topicdp demo`` (the generated themed corpus on its public word list, a DP
count of the users, dp-vem); ``embedded``, the built-in embedded texts at the document level and epsilon 50 (its 300 documents are few) with every step the
default road has without public data (a DP count, a DP vocabulary, the re-plan on the selected words, dp-vem).

Run::

    OPENBLAS_NUM_THREADS=1 python benchmarks/refactors/module_visits.py --corpus themed
    OPENBLAS_NUM_THREADS=1 python benchmarks/refactors/module_visits.py --corpus embedded
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def _carries(value, request) -> bool:
    return value is request or getattr(value, "request", None) is request


def trace(request) -> list[tuple[str, str]]:
    """The (module, function) of every call handed ``request`` (or its plan) during ``pipeline.release``."""
    from topicdp.pipeline import release

    calls: list[tuple[str, str]] = []

    def profile(frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("topicdp"):
            return
        code = frame.f_code
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        if any(_carries(frame.f_locals.get(name), request) for name in names):
            calls.append((module, code.co_name))

    sys.setprofile(profile)
    try:
        release(request, echo=lambda line: None)
    finally:
        sys.setprofile(None)
    return calls


def stays(calls: list[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    """Consecutive calls in one module merged into one stay (module, its functions in order)."""
    out: list[tuple[str, list[str]]] = []
    for module, function in calls:
        if out and out[-1][0] == module:
            out[-1][1].append(function)
        else:
            out.append((module, [function]))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=("themed", "embedded"), default="themed")
    args = parser.parse_args(argv)

    from topicdp.datasets import themed_vocabulary
    from topicdp.pipeline import CorpusSource, ReleaseRequest, VocabularyPolicy

    if args.corpus == "themed":
        request = ReleaseRequest(CorpusSource("themed"), VocabularyPolicy.public(themed_vocabulary()), seed=1)
    else:
        request = ReleaseRequest(CorpusSource("embedded"), VocabularyPolicy.dp(max_features=500), unit="document", epsilon=50.0,
                                 n_topics=5, seed=1, release_anyway=True)
    visits = stays(trace(request))
    seen: set[str] = set()
    returns = []
    for i, (module, functions) in enumerate(visits):
        again = module in seen  # consecutive stays are in different modules: seen before means left before
        seen.add(module)
        if again:
            returns.append(module)
        print(f"{i + 1:3d}{' R' if again else '  '} {module}: {', '.join(dict.fromkeys(functions))}")
    modules = {m for m, _ in visits}
    print(f"\n{len(visits)} stays in {len(modules)} modules; {len(returns)} returns to a module already left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
