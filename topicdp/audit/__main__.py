"""``python -m topicdp.audit``: the ``topicdp audit`` command without the top-level CLI."""

import sys

from .cli import main

sys.exit(main())
