"""`simulate`: a stack on a real, local Kubernetes control plane built from pinned Go modules."""
