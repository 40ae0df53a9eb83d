"""The observability pack: what is scraped, the alerts that page on GPU faults, and the Grafana dashboards.

Pure builders over the validated stack (no pulumi import): `pack` decides what a stack gets, `metrics` lists every
series the pack reads and where it comes from, `dcgm` configures the GPU Operator's DCGM exporter, `alerts` and
`dashboards` build the PrometheusRule and the dashboards' ConfigMaps, `scrape` the ServiceMonitors the charts do
not make, and `gke` GKE's managed DCGM.
"""
