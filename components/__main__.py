"""Entry point of `python -m components`."""

import gc
import sys

from components.cli import main

# A render or check builds large trees of plain objects that are never cyclic garbage; collecting
# every 700 allocations (the default) spent a fifth of a 1,000-job render rescanning them.
gc.set_threshold(50_000, 20, 100)
sys.exit(main())
