"""topicdp changes nobody else's loggers (issue 11)."""

import subprocess
import sys


def test_import_leaves_the_gensim_logger_alone():
    code = ("import logging; g = logging.getLogger('gensim'); g.setLevel(logging.DEBUG); "
            "import topicdp, topicdp.adapters.gensim, topicdp.cli; "
            "assert g.level == logging.DEBUG, g.level; "
            "assert logging.getLogger().handlers == [], logging.getLogger().handlers")
    subprocess.run([sys.executable, "-c", code], check=True)
