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

#: module-name prefix -> layer; the longest matching prefix wins (``a.b`` matches ``a.b`` and ``a.b.*``). Two packages
#: share a layer only where neither imports the other (:func:`test_a_layer_s_packages_do_not_import_each_other`).
LAYERS: dict[str, int] = {
    # 0 - leaves: they import nothing of topicdp (``_names`` is read by ``--help`` without numpy)
    "topicdp._names": 0, "topicdp._extras": 0, "topicdp._files": 0, "topicdp._progress": 0, "topicdp._dates": 0,
    "topicdp._repeats": 0,
    # 1 - argument checks, the privacy report's data type, tables as rows
    "topicdp._validation": 1, "topicdp.report": 1, "topicdp.tables": 1,
    # 2 - privacy accounting, the corpus, the inference primitives (E-step, fold-in, perplexity)
    "topicdp.rdp": 2, "topicdp.corpus": 2, "topicdp.inference": 2,
    # 3 - data sets, streaming readers, the canonical topic order and top words, the fold-in transform
    "topicdp.datasets": 3, "topicdp.streaming": 3, "topicdp.topics": 3, "topicdp.transform": 3,
    # 4 - measures of a topic-word matrix, the sensitivity sampler, the DP vocabulary, the view's page
    "topicdp.metrics": 4, "topicdp.samplers": 4, "topicdp.vocabulary": 4, "topicdp._view_page": 4,
    # 5 - the release type (PrivateRelease)
    "topicdp.private_release": 5,
    # 6 - mechanisms producing releases: noise primitives, dp-vem, DP-SVI
    "topicdp.mechanisms": 6, "topicdp.variational": 6, "topicdp.baselines": 6,
    # 7 - the spectral backend; the readability forecasts (dp-vem's simulation runs the mechanism)
    "topicdp.spectral": 7, "topicdp.forecast": 7,
    # 8 - adapters: every model as f: Corpus -> K x V
    "topicdp.adapters": 8,
    # 9 - the agnostic road (TopicDP over an adapter)
    "topicdp.agnostic": 9,
    # 10 - the release pipeline: request -> prepare -> plan -> release
    "topicdp.pipeline": 10,
    # 11 - what runs the pipeline or reads its releases: the planned estimators, compare, the audit, plots, views
    "topicdp.estimators": 11, "topicdp.experiments": 11, "topicdp.audit": 11, "topicdp.plots": 11,
    "topicdp.view": 11,
    # 12 - command lines
    "topicdp.cli": 12, "topicdp._argparse": 12, "topicdp.compare_cli": 12, "topicdp.evaluate_cli": 12,
    "topicdp.audit.cli": 12, "topicdp.audit.__main__": 12, "topicdp.__main__": 12,
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
    assert _layer("topicdp.audit.cli") == 12 and _layer("topicdp.audit.runner") == 11
    assert _layer("topicdp.pipeline") == _layer("topicdp.pipeline.plan") == 10
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


def _package(module: str) -> str:
    """The LAYERS prefix a module falls under (its package, or the module itself where it has its own entry)."""
    return max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)


def test_a_layer_s_packages_do_not_import_each_other(graph):
    # one package per layer where they depend on one another: packages share a layer only when independent (the
    # command lines aside, which are entry points side by side)
    shared = sorted(f"{m} imports {t} (both layer {_layer(m)})" for m, targets in graph.items() if m != PACKAGE
                    for t in targets - {PACKAGE} if _layer(m) == _layer(t) != 12 and _package(m) != _package(t))
    assert not shared, "packages of one layer that import each other (give them layers of their own):\n" + \
        "\n".join(shared)
