"""Thin Pulumi components over pulumi_kubernetes: they turn the pure builders' objects into resources."""
