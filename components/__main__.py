"""Entry point of `python -m components`."""

import sys

from components import collector
from components.cli import main

collector.tune()
sys.exit(main())
