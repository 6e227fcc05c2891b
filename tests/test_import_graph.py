"""The import graph of the ``topicdp`` package: no cycles, and imports point downward only.

Every module of the package is parsed with :mod:`ast` (nothing is imported, so optional extras do not
matter). Every ``import`` and ``from ... import`` node anywhere in a file counts — module level, inside a
function, under ``if TYPE_CHECKING:`` — because a function-level import is still a dependency, only a
later one. Relative imports are resolved against the importing module's package. ``from pkg import x``
where ``pkg.x`` is a module is an edge to ``pkg.x``; otherwise (a name defined in ``pkg``) it is an edge
to ``pkg`` itself, i.e. to ``pkg/__init__.py``; ``import a.b.c`` is an edge to ``a.b.c``. Importing a
submodule also runs its parent packages' ``__init__``; those implicit edges are *not* added (a package's
``__init__`` importing its own submodules, which import their siblings, is the ordinary package
pattern and would otherwise read as a cycle).

Layers (:data:`LAYERS`) run from 0 (no ``topicdp`` imports at all) upward; a module may import modules of
its own layer or lower. Within a layer the imports must be acyclic, which the cycle test checks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "topicdp"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

#: module-name prefix -> layer; the longest matching prefix wins (``a.b`` matches ``a.b`` and ``a.b.*``).
LAYERS: dict[str, int] = {
    # 0 - leaves: argument checks, registry names and the optional-extras helper; they import nothing of
    #     topicdp (``_names`` is read by ``--help`` without numpy; ``_validation`` by every estimator).
    "topicdp._validation": 0,
    "topicdp._names": 0,
    "topicdp._extras": 0,
    "topicdp._files": 0,  # atomic writes, output/input path checks, scratch directories, SIGTERM unwinding
    "topicdp._progress": 0,
    "topicdp._dates": 0,  # dates read under a stated format, locale-independent (--date-format's check)
    "topicdp._repeats": 0,  # the warning on repeated private fits outside a ledger  # progress lines and bars of long steps, on the topicdp logger
    # 1 - foundations that know nothing of topic models' fitting or releases: privacy accounting (rdp),
    #     the privacy report (reads rdp's ledger), the corpus and its readers, synthetic/real data sets, the
    #     shared inference primitives (E-step, fold-in, perplexity), the canonical topic order and gensim's
    #     LDA on a corpus (``topics``: the adapters, the audit and the forecasts all need them), and the
    #     streaming readers/tokenisers.
    "topicdp.rdp": 1,
    "topicdp.report": 1,
    "topicdp.corpus": 1,
    "topicdp.tables": 1,  # Parquet, CSV, DataFrames and SQL queries as rows, for the corpus' one record reader
    "topicdp.datasets": 1,
    "topicdp.inference": 1,
    "topicdp.topics": 1,
    "topicdp.streaming": 1,
    # 2 - the building blocks of a release: metrics and mechanisms over K x V matrices, the PrivateRelease
    #     data type, vocabulary selection, utility forecasts, and the estimators (spectral, DP-SVI,
    #     DP variational EM) with their sklearn ``transform`` (fold-in) mixin, and the sensitivity sampler.
    #     They use layers 0-1 and each other (acyclically).
    "topicdp.metrics": 2,
    "topicdp.mechanisms": 2,
    "topicdp.private_release": 2,
    "topicdp._view_page": 2,  # the page of topicdp.view from a published dict: a release shows it in a notebook
    "topicdp.vocabulary": 2,
    "topicdp.forecast": 2,
    "topicdp.spectral": 2,
    "topicdp.baselines": 2,
    "topicdp.variational": 2,
    "topicdp.transform": 2,
    "topicdp.samplers": 2,
    # 3 - compositions of the blocks: adapters wrap the estimators as f: Corpus -> K x V (so they sit above
    #     them), and TopicDP (agnostic road) runs an adapter through the sampler and a mechanism.
    "topicdp.adapters": 3,
    "topicdp.agnostic": 3,
    # 4 - the release pipeline: request -> plan -> execute -> PrivateRelease.
    "topicdp.pipeline": 4,
    # 5 - consumers of releases: the comparison harness, the privacy audit, plots and views of a release.
    "topicdp.estimators": 5,  # the private estimators a user fits: each fit runs the pipeline
    "topicdp.experiments": 5,
    "topicdp.audit": 5,
    "topicdp.plots": 5,
    "topicdp.view": 5,
    # 6 - command lines: argparse front-ends and ``python -m`` entry points. The ``compare`` and ``audit``
    #     subcommands' parsers (compare_cli, audit.cli) are loaded by the ``topicdp`` command (cli), so
    #     they sit beside it, above the harness and the audit they drive; nothing below imports them.
    "topicdp.cli": 6,
    "topicdp._argparse": 6,  # the command line's lazy sub-command parser
    "topicdp.compare_cli": 6,
    "topicdp.evaluate_cli": 6,  # the ``evaluate`` subcommand: it asks compare's rule whether to refuse before spending
    "topicdp.audit.cli": 6,
    "topicdp.audit.__main__": 6,
    "topicdp.__main__": 6,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py")) if "__pycache__" not in p.parts}


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module named by a (possibly relative) ``from`` import."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the topicdp modules it imports (anywhere in its file)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(name, path.name == "__init__.py", node)
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.add(sub if sub in modules else source)
        graph[name] = {t for t in targets if t == PACKAGE or t.startswith(PACKAGE + ".")}
    return graph


def _layer(module: str) -> int | None:
    matches = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return LAYERS[max(matches, key=len)] if matches else None


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative); components in no particular order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def _a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete cycle inside a strongly connected component, for the error message."""
    members = set(component)
    path = [component[0]]
    seen = {component[0]: 0}
    while True:
        nxt = sorted(t for t in graph[path[-1]] if t in members)[0]
        if nxt in seen:
            return path[seen[nxt]:] + [nxt]
        seen[nxt] = len(path)
        path.append(nxt)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found = [_a_cycle(graph, c) for c in _strongly_connected(graph) if len(c) > 1]
    found += [[m, m] for m, targets in graph.items() if m in targets]
    return found


@pytest.fixture(scope="module")
def modules() -> dict[str, Path]:
    found = _modules()
    assert f"{PACKAGE}.metrics" in found and f"{PACKAGE}.inference" in found  # the walk found the package
    return found


@pytest.fixture(scope="module")
def graph(modules) -> dict[str, set[str]]:
    return _edges(modules)


def test_resolution_of_relative_imports():
    def resolve(module, is_package, source):
        node = ast.parse(source).body[0]
        assert isinstance(node, ast.ImportFrom)
        return _resolve(module, is_package, node)

    assert resolve("topicdp.metrics.readability", False, "from ..inference import x") == "topicdp.inference"
    assert resolve("topicdp.metrics.readability", False, "from . import x") == "topicdp.metrics"
    assert resolve("topicdp.metrics", True, "from .readability import x") == "topicdp.metrics.readability"
    assert resolve("topicdp.metrics", True, "from ..rdp import x") == "topicdp.rdp"
    assert resolve("topicdp.cli", False, "from .audit.cli import x") == "topicdp.audit.cli"
    assert _layer("topicdp.audit.cli") == 6 and _layer("topicdp.audit.runner") == 5
    assert _layer("topicdp.pipeline") == _layer("topicdp.pipeline.plan") == 4
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_every_module_has_a_layer(modules):
    unassigned = sorted(m for m in modules if m != PACKAGE and _layer(m) is None)
    assert not unassigned, f"modules missing from LAYERS in tests/test_import_graph.py: {unassigned}"


def test_no_submodule_imports_the_root_package(graph):
    # ``topicdp/__init__.py`` is the public face (lazy attributes); the package's own modules go to the
    # module that defines a name, so that importing one module never loads the whole API.
    offenders = sorted(m for m, targets in graph.items() if m != PACKAGE and PACKAGE in targets)
    assert not offenders, f"modules importing the root package {PACKAGE!r} (import the defining module): {offenders}"


def test_no_import_cycles(graph):
    graph = {m: targets - {PACKAGE} for m, targets in graph.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_imports_point_downward(graph):
    upward = []
    for module, targets in sorted(graph.items()):
        if module == PACKAGE:
            continue  # the public face imports from every layer (lazily)
        for target in sorted(targets - {PACKAGE}):
            lo, hi = _layer(module), _layer(target)
            if lo is not None and hi is not None and hi > lo:
                upward.append(f"{module} (layer {lo}) imports {target} (layer {hi})")
    assert not upward, "imports from a lower layer up to a higher one:\n" + "\n".join(upward)
