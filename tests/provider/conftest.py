"""The plugin's package (provider/gpu_training_plugin) is imported as the plugin imports it."""

from __future__ import annotations

import sys
from pathlib import Path

PROVIDER = Path(__file__).resolve().parents[2] / "provider"
if str(PROVIDER) not in sys.path:
    sys.path.insert(0, str(PROVIDER))
