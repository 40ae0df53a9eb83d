"""The catalog's closed vocabularies: clouds, CPU architectures and GKE's GPUDirect fabrics."""

from __future__ import annotations

from typing import Literal

Provider = Literal["aws", "gcp"]
Arch = Literal["x86_64", "arm64"]
KUBERNETES_ARCH: dict[str, str] = {"x86_64": "amd64", "arm64": "arm64"}
"""The kubernetes.io/arch value of each CPU architecture."""
GpuDirect = Literal["tcpx", "tcpxo", "rdma"]
"""GKE's GPUDirect fabrics: TCPX (A3 High), TCPXO (A3 Mega), RDMA over RoCE with gIB (A3 Ultra, A4)."""
