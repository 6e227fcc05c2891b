"""The example notebook runs headless (nbclient) and shows what a notebook user needs: progress, the guarantee first,
the view inline."""

import html
import os
import re
from pathlib import Path

import pytest

from facts import assert_facts

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "release_in_a_notebook.ipynb"


def _texts(nb) -> list[str]:
    """Every text the executed notebook holds: streams, each output's data, and the widgets' saved state (a bar's
    final text lives there)."""
    out = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                out.append(output["text"])
            for value in output.get("data", {}).values():
                out.append(value if isinstance(value, str) else str(value))
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model in state.values():
        value = model.get("state", {}).get("value")
        if isinstance(value, str):
            out.append(html.unescape(value))
    return out


def test_the_notebook_runs_headless_and_shows_progress_the_headline_and_the_view(monkeypatch):
    for module, reason in (("nbclient", "nbclient"), ("nbformat", "nbformat"), ("ipykernel", "ipykernel")):
        pytest.importorskip(module, reason=f"{reason} is not installed (pip install 'topicdp[notebook]')")
    import nbformat
    from nbclient import NotebookClient

    # the kernel imports this checkout, one BLAS thread as every test; progress shown whatever the caller's session
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.delenv("TOPICDP_PROGRESS", raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code")  # committed clean
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    texts = _texts(nb)
    joined = "\n".join(texts)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors

    # progress: dp-vem's passes and the sampler's pairs on bars, the sampler's forecast with its ETA
    assert "dp-vem passes" in joined and "7/7" in joined, joined[:3000]
    assert "sensitivity pairs" in joined and "4/4" in joined
    assert re.search(r"sensitivity sampling: h=4 pairs .* ETA \d\d:\d\d:\d\d UTC", joined)

    # the release's display: the guarantee first, then topicdp.view's page inline
    shown = [o["data"]["text/html"] for c in nb.cells for o in c.get("outputs", [])
             if "text/html" in o.get("data", {}) and "topicdp-release" in o["data"]["text/html"]]
    assert len(shown) == 1
    page = shown[0]
    at = page.index("guarantee: (3, 1e-06)-DP")  # the headline, up to its tag's end, before the view
    assert at < page.index("<iframe")
    assert_facts(page[at:page.index("<", at)], "each user", "add-remove", "(certified)", ordered=True)
    view = html.unescape(re.search(r'srcdoc="([^"]*)"', page).group(1))
    assert view.startswith("<!DOCTYPE html>") and 'id="topicdp-view-data"' in view and 'id="map"' in view
    # the report of the wrapped model says random DP, NOT DP, first
    assert any(t.startswith("<div class=\"topicdp-report\"") and "random DP, NOT DP" in t for t in texts)
    # to_sklearn's transform put each sentence in its topic
    assert re.search(r"football: topic \d+ \(0\.\d\d\): match goal", joined)
    assert re.search(r"baking: topic \d+ \(0\.\d\d\): recipe oven", joined)
