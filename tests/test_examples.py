import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script", ["gensim_lda_embedded.py", "custom_callable.py", "enron_user_level.py"])
def test_example_runs(script):
    # run against this checkout (a script's own directory, not the cwd, heads sys.path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLES.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), "--quick"], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "guarantee" in proc.stdout or "skipped" in proc.stdout
