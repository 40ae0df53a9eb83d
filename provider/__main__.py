"""The gpu-training component plugin. The Python language host runs `python <this folder> <engine address>`.

It prints the port of its gRPC provider server on stdout; the engine asks it for the schema (inferred
from the components' type annotations) and to construct the components.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # gpu_training_plugin
try:
    import components  # noqa: F401  (installed by requirements.txt)
except ImportError:  # a checkout without the package installed: use the repository's
    sys.path.insert(1, str(HERE.parent))

from gpu_training_plugin import COMPONENTS, version  # noqa: E402
from pulumi.provider.experimental import component_provider_host  # noqa: E402

from components import collector  # noqa: E402

if __name__ == "__main__":
    collector.tune()
    component_provider_host(COMPONENTS, name="gpu-training", namespace="gpu-training", version=version())
