"""Entry point of `python -m components`."""

import sys

from components.cli import main

sys.exit(main())
