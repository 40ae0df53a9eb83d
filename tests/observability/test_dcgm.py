"""The DCGM exporter's metrics list and ServiceMonitor, as the GPU Operator chart takes them."""

from __future__ import annotations

import csv
import io

from components.observability import dcgm, metrics


def test_the_metrics_list_parses_as_the_exporter_reads_it() -> None:
    # dcgm-exporter internal/pkg/counters/counter_config.go: encoding/csv with '#' comments, three fields a record,
    # each trimmed of spaces; a type it does not know fails the exporter.
    reader = csv.reader(io.StringIO(dcgm.csv()))
    records = [[field.strip() for field in r] for r in reader if r and not r[0].startswith("#")]
    assert all(len(r) == 3 for r in records), [r for r in records if len(r) != 3]
    assert [r[0] for r in records] == [m.name for m in metrics.DCGM_FIELDS]
    assert {r[1] for r in records} <= {"gauge", "counter", "histogram", "summary", "label"}
    assert len({r[0] for r in records}) == len(records), "each field once"


def test_the_fields_the_default_list_leaves_out_are_in_ours() -> None:
    # Commented out (or absent) in dcgm-exporter 4.5.3-4.8.2 etc/default-counters.csv, and read by the alerts.
    needed = {
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_ROW_REMAP_PENDING",
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_THERMAL_VIOLATION",
        "DCGM_EXP_XID_ERRORS_COUNT",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    }
    assert needed <= {m.name for m in metrics.DCGM_FIELDS}


def test_with_a_prometheus_operator_the_exporter_gets_our_list_and_a_node_label() -> None:
    values = dcgm.exporter_values(service_monitor=True, labels={"release": "prom"})
    assert values["config"] == {"name": dcgm.CONFIGMAP, "create": True, "data": dcgm.csv()}
    monitor = values["serviceMonitor"]
    assert monitor["enabled"] is True and monitor["honorLabels"] is False, "the exporter's pod labels become exported_*"
    assert monitor["relabelings"] == [
        {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"}
    ]
    assert monitor["additionalLabels"] == {"release": "prom"}
    assert "additionalLabels" not in dcgm.exporter_values(service_monitor=True, labels={})["serviceMonitor"]
