"""``python -m rageval_core``: the CLI (see ``rageval_core.cli``)."""

import sys

from rageval_core.cli import main

sys.exit(main())
