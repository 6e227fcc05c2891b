"""topicdp changes nobody else's loggers."""

import subprocess
import sys


def test_import_leaves_the_gensim_logger_alone():
    code = ("import logging; g = logging.getLogger('gensim'); g.setLevel(logging.DEBUG); "
            "import topicdp, topicdp.adapters.gensim, topicdp.cli; "
            "assert g.level == logging.DEBUG, g.level; "
            "assert logging.getLogger().handlers == [], logging.getLogger().handlers")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_short_durations_read_in_tenths():
    """Passes of a few tenths of a second each read apart ('2.1 s', '2.4 s'), not all '2 s'."""
    from topicdp._progress import format_duration

    assert [format_duration(s) for s in (0.04, 2.14, 2.46, 9.94, 12.4, 95, 4000, 6000)] == \
        ["0.0 s", "2.1 s", "2.5 s", "9.9 s", "12 s", "1.6 min", "66.7 min", "1.7 h"]
