"""``python -m effstats audit SCORES.csv ...`` — same as the ``effstats`` console script."""
import sys

from ._entry import main

sys.exit(main())
