"""``python -m effstats audit SCORES.csv ...`` — same as the ``effstats`` console script."""
import sys

from .cli import main

sys.exit(main())
