"""The finer layer map of the ``topicdp`` package: one package per layer where the packages depend on one another.

``tests/test_import_graph.py`` puts the building blocks of a release in one layer (metrics, mechanisms, the
release type, the vocabulary, the forecast, the estimators, the sampler, ...), so imports among them pass in
either direction. Here each of them has its own tier (:data:`TIERS`, bottom first); packages share a tier only
where none imports another (the leaves; the data sets and the streaming readers; the three estimators; the
consumers of a release; the command lines). A module may import modules of its own tier or lower.

The import graph is read as in ``tests/test_import_graph.py`` (every ``import`` anywhere in a file, parsed with
``ast``; relative imports resolved; ``from pkg import x`` is an edge to ``pkg.x`` where that is a module). The
imports that run upward under this map today are :data:`KNOWN_UPWARD`; the strict test is marked ``xfail``
with that list, so it passes while they remain and fails (XPASS) once every one is gone: then remove the mark.
A new upward import fails :func:`test_no_new_upward_imports` at once.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "topicdp"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

#: (name of the tier, module-name prefixes in it), bottom first; the longest matching prefix wins.
TIERS: list[tuple[str, tuple[str, ...]]] = [
    ("leaves", ("topicdp._names", "topicdp._extras", "topicdp._files", "topicdp._progress", "topicdp._dates",
                "topicdp._repeats")),
    ("argument checks", ("topicdp._validation",)),
    ("privacy accounting", ("topicdp.rdp",)),
    ("the privacy report", ("topicdp.report",)),
    ("tables as rows", ("topicdp.tables",)),
    ("the corpus", ("topicdp.corpus",)),
    ("data sets and streaming readers", ("topicdp.datasets", "topicdp.streaming")),
    ("inference primitives", ("topicdp.inference",)),
    ("canonical topics", ("topicdp.topics",)),
    ("the view page", ("topicdp._view_page",)),
    ("fold-in transform", ("topicdp.transform",)),
    ("the release type", ("topicdp.release",)),
    ("mechanisms", ("topicdp.mechanisms",)),
    ("metrics", ("topicdp.metrics",)),
    ("the forecast", ("topicdp.forecast",)),
    ("vocabulary selection", ("topicdp.vocabulary",)),
    ("estimators", ("topicdp.spectral", "topicdp.baselines", "topicdp.variational")),
    ("the sensitivity sampler", ("topicdp.samplers",)),
    ("adapters", ("topicdp.adapters",)),
    ("the agnostic road", ("topicdp.agnostic",)),
    ("the pipeline", ("topicdp.pipeline",)),
    ("consumers of releases", ("topicdp.experiments", "topicdp.audit", "topicdp.plots", "topicdp.view")),
    ("command lines", ("topicdp.cli", "topicdp._argparse", "topicdp.experiments.cli", "topicdp.audit.cli",
                       "topicdp.audit.__main__", "topicdp.__main__")),
]

#: The imports that run upward under :data:`TIERS` at the time of writing (module -> imported module).
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset({
    ("topicdp.release", "topicdp.mechanisms.postprocess"),
    ("topicdp.release", "topicdp.metrics.private"),
    ("topicdp.metrics.select", "topicdp.variational"),
    ("topicdp.metrics.yardstick", "topicdp.forecast"),
})


def _tier(module: str) -> int | None:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(TIERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    return rank


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py")) if "__pycache__" not in p.parts}


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
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
        graph[name] = {t for t in targets if t.startswith(PACKAGE + ".")}
    return graph


def upward_imports() -> list[tuple[str, str]]:
    """(module, imported module) for every import from a lower tier up to a higher one."""
    up = []
    for module, targets in sorted(_edges(_modules()).items()):
        if module == PACKAGE:
            continue  # the public face imports from every tier (lazily)
        for target in sorted(targets):
            lo, hi = _tier(module), _tier(target)
            if lo is not None and hi is not None and hi > lo:
                up.append((module, target))
    return up


def _lines(pairs) -> str:
    return "\n".join(f"  {m} ({TIERS[_tier(m)][0]}) imports {t} ({TIERS[_tier(t)][0]})" for m, t in sorted(pairs))


def test_every_module_has_a_tier():
    missing = sorted(m for m in _modules() if m != PACKAGE and _tier(m) is None)
    assert not missing, f"modules missing from TIERS in tests/test_layers.py: {missing}"


def test_tiers_name_each_prefix_once():
    prefixes = [p for _, ps in TIERS for p in ps]
    assert len(prefixes) == len(set(prefixes))


def test_no_new_upward_imports():
    new = set(upward_imports()) - KNOWN_UPWARD
    assert not new, "imports up the finer layer map, not among the known ones:\n" + _lines(new)


@pytest.mark.xfail(strict=True, reason="known upward imports under the finer map: " + "; ".join(
    f"{m} -> {t}" for m, t in sorted(KNOWN_UPWARD)))
def test_imports_point_downward_under_the_finer_map():
    up = upward_imports()
    assert not up, "imports from a lower tier up to a higher one:\n" + _lines(up)
