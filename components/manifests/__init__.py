"""The Kubernetes objects a stack emits, as plain dicts: one module per kind of workload or platform object."""
