#!/bin/sh
# node-check: one GPU node's check at join, one step per container of the check's pod.
#
# Usage: node-check.sh gpu | nics | nvlink | verdict | hold
#
#   gpu      (DCGM image) nvidia-smi's GPU, ECC and row-remap state, clock slowdowns, the kernel's XIDs,
#            and dcgmi diag -r DCGM_LEVEL on the node's one DCGM host engine (localhost:5555): with
#            DCGM_ENGINE=private, one started here if none answers and stopped after; with any other (whose
#            engine the node runs: gpu-operator, gke), waited for up to DCGM_WAIT seconds and never started
#            here, and the diagnostic fails if it does not answer
#   nics     (any image) the fabric NICs under SYSFS (default /sys): RDMA devices and GPU netdevs
#   nvlink   (NCCL-tests image) all_reduce_perf across the node's GPUs, NVLINK_MIN to MAX_BYTES
#   verdict  (kubectl image) node-verdict.sh over RESULTS; then the node is released (STARTUP_TAINT and
#            LEGACY_TAINT removed) or held (FAILED_TAINT instead, a node condition and an event; with
#            REPLACE_FAILED=nodeclaim its Karpenter NodeClaim deleted), and labelled with the result, last,
#            which ends this pod
#   hold     wait for that (a DaemonSet's container may not exit)
#
# Each gathering step records its output and status in RESULTS and exits 0, so that the verdict always runs
# and judges what is missing. Reads NODE_NAME, RESULTS, DCGM_LEVEL, EXPECT_GPUS, NCCL_TESTS, NVLINK_MIN,
# MAX_BYTES, CHECK_TIMEOUT (seconds for the whole check: the first step starts the clock, and each step gets
# what is left of it), DCGM_ENGINE, DCGM_WAIT, and the verdict's settings (node-verdict.sh). Plain POSIX sh.

set -u
step=${1:?usage: node-check.sh gpu | nics | nvlink | verdict | hold}
results=${RESULTS:-/results}
scripts=$(dirname "$0")
budget=${CHECK_TIMEOUT:-3600}
key=gpu-training/node-check
result_label=gpu-training/node-check-result
replace_failed=${REPLACE_FAILED:-}
mkdir -p "$results"

left() {  # the seconds left of the check's budget; the first call starts the clock (in RESULTS, shared by steps)
    now=$(date +%s)
    [ -s "$results/deadline" ] || echo $((now + budget)) >"$results/deadline"
    remaining=$(($(cat "$results/deadline") - now))
    if [ "$remaining" -gt 0 ]; then echo "$remaining"; else echo 1; fi
}

bounded() {  # bounded CMD...: CMD under what is left of the check's budget, where the image has timeout(1)
    if command -v timeout >/dev/null 2>&1; then timeout "$(left)" "$@"; else "$@"; fi
}

engine_answers() {  # engine_answers SECONDS: whether the node's DCGM engine answers within SECONDS and the budget
    waited=0
    until dcgmi discovery -l >/dev/null 2>&1; do
        [ "$waited" -ge "$1" ] || [ "$(left)" -le 5 ] && return 1
        sleep 5
        waited=$((waited + 5))
    done
}

gpu() {
    nvidia-smi --query-gpu=index,pci.bus_id,ecc.errors.uncorrected.volatile.total,remapped_rows.pending,remapped_rows.failure \
        --format=csv,noheader >"$results/gpus.csv" 2>"$results/gpus.err"
    echo $? >"$results/gpus.rc"
    nvidia-smi --query-gpu=index,clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown \
        --format=csv,noheader >"$results/clocks.csv" 2>/dev/null || : >"$results/clocks.csv"
    # The container runs privileged for DCGM's diagnostics, which also lets it read the kernel's ring buffer.
    dmesg 2>/dev/null | grep 'NVRM: Xid' >"$results/xid.log" || :
    [ -n "${NVLINK_FABRIC:-}" ] && fabric
    started=""
    engine=${DCGM_ENGINE:-private}
    if [ "$engine" = private ]; then
        if ! dcgmi discovery -l >/dev/null 2>&1; then
            nv-hostengine >/dev/null 2>&1 && started=yes
            sleep 3
        fi
    elif ! engine_answers "${DCGM_WAIT:-600}"; then
        # A second engine beside the node's would break its profiling fields: fail instead, saying whose is missing.
        echo "Error: the node's DCGM host engine ($engine) did not answer on localhost:5555 within ${DCGM_WAIT:-600} s" \
            >"$results/diag.txt"
        echo 125 >"$results/diag.rc"
        return 0
    fi
    bounded dcgmi diag -r "${DCGM_LEVEL:-2}" >"$results/diag.txt" 2>&1
    echo $? >"$results/diag.rc"
    [ -n "$started" ] && nv-hostengine --term >/dev/null 2>&1
    return 0
}

fabric() {  # each GPU's NVLink fabric registration, from nvidia-smi -q's Fabric section: "GPU|State|Status|CliqueId"
    nvidia-smi -q 2>/dev/null | awk '
        function field(line) { sub(/^[^:]*: */, "", line); sub(/ *$/, "", line); return line }
        function flush() { if (gpu != "" && seen) print gpu "|" state "|" status "|" clique; seen = 0 }
        /^GPU [0-9A-Fa-f]/ { flush(); gpu = $2; state = status = clique = ""; inside = 0; next }
        /^ *Fabric *$/ { match($0, /^ */); depth = RLENGTH; child = 0; inside = 1; seen = 1; next }
        inside {
            match($0, /^ */)
            if (RLENGTH <= depth) { inside = 0; next }
            if (child == 0) child = RLENGTH
            if (RLENGTH != child) next  # a subsection (Health) of its own
            if ($1 == "State") state = field($0)
            else if ($1 == "Status") status = field($0)
            else if ($1 == "CliqueId") clique = field($0)
        }
        END { flush() }
    ' >"$results/fabric.txt"
}

nics() {
    sys=${SYSFS:-/sys}
    out="$results/nics.txt"
    : >"$out"
    for dev in "$sys"/class/infiniband/*; do
        [ -d "$dev" ] || continue
        state=$(sed 's/^[0-9]*: *//' "$dev/ports/1/state" 2>/dev/null || echo UNKNOWN)
        rate=$(awk '{ print $1 + 0 }' "$dev/ports/1/rate" 2>/dev/null || echo 0)
        echo "rdma ${dev##*/} ${state:-UNKNOWN} ${rate:-0}" >>"$out"
    done
    for dev in "$sys"/class/net/*; do
        [ -d "$dev/device" ] || continue  # physical NICs only: no lo, bridges or veths
        state=$(cat "$dev/operstate" 2>/dev/null || echo unknown)
        speed=$(cat "$dev/speed" 2>/dev/null || echo 0)
        echo "net ${dev##*/} $state ${speed:-0}" >>"$out"
    done
    return 0
}

nvlink() {
    gpus=${EXPECT_GPUS:?EXPECT_GPUS is required}
    bounded "${NCCL_TESTS:?NCCL_TESTS is required}/all_reduce_perf" -b "${NVLINK_MIN:-512M}" -e "${MAX_BYTES:?}" \
        -f 2 -g "$gpus" -c 1 -w 5 -n 20 >"$results/nvlink.log" 2>&1
    echo $? >"$results/nvlink.rc"
    return 0
}

escaped() {  # a JSON string's content
    printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr -d '\n\r'
}

condition() {  # condition STATUS REASON MESSAGE: the node's GPUNodeCheckFailed condition
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    kubectl patch node "$NODE_NAME" --subresource=status --type=strategic -p \
        "{\"status\":{\"conditions\":[{\"type\":\"GPUNodeCheckFailed\",\"status\":\"$1\",\"reason\":\"$2\",\"message\":\"$(escaped "$3")\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}}"
}

event() {  # event MESSAGE: a Warning event on the node
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    kubectl create -f - <<EOF
{"apiVersion": "v1", "kind": "Event",
 "metadata": {"generateName": "$NODE_NAME.node-check-", "namespace": "default"},
 "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": "$NODE_NAME"},
 "reason": "GPUNodeCheckFailed", "message": "$(escaped "$1")", "type": "Warning",
 "source": {"component": "gpu-training-node-check", "host": "$NODE_NAME"},
 "firstTimestamp": "$now", "lastTimestamp": "$now", "count": 1}
EOF
}

untaint() {  # untaint KEY: remove the node's taint with that key, if it has one
    kubectl taint node "$NODE_NAME" "$1-" 2>/dev/null || :
}

replace() {  # the failed node's NodeClaim, deleted so that Karpenter launches another and removes this one
    claim=$(kubectl get nodeclaims.karpenter.sh \
        -o jsonpath="{range .items[?(@.status.nodeName==\"$NODE_NAME\")]}{.metadata.name}{end}")
    if [ -n "$claim" ]; then
        kubectl delete nodeclaims.karpenter.sh "$claim" --wait=false
    else
        echo "note no NodeClaim names $NODE_NAME: nothing to delete"
    fi
}

verdict() {
    : "${NODE_NAME:?NODE_NAME is required}"
    startup_taint=${STARTUP_TAINT:?STARTUP_TAINT is required}
    legacy_taint=${LEGACY_TAINT:?LEGACY_TAINT is required}
    failed_taint=${FAILED_TAINT:?FAILED_TAINT is required}
    SCRIPTS=$scripts sh "$scripts/node-verdict.sh" "$results" | tee "$results/verdict.txt"
    summary=$(tail -n 1 "$results/verdict.txt")
    when=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    set -e
    kubectl annotate node "$NODE_NAME" --overwrite "$key-summary=$summary" "$key-time=$when"
    case "$summary" in
        PASS*)
            untaint "$startup_taint"
            untaint "$legacy_taint"
            condition False Passed "$summary"
            kubectl label node "$NODE_NAME" --overwrite "$result_label=passed"
            ;;
        *)
            # The failed taint first, then the startup taint goes: the node is never open to a job, and every
            # autoscaler sees a started node no pending pod fits.
            kubectl taint node "$NODE_NAME" --overwrite "$failed_taint"
            untaint "$startup_taint"
            untaint "$legacy_taint"
            condition True CheckFailed "$summary"
            event "$summary"
            kubectl label node "$NODE_NAME" --overwrite "$result_label=failed"
            [ "$replace_failed" = nodeclaim ] && replace
            ;;
    esac
    set +e
}

hold() {
    # The result label ends this pod (the DaemonSet no longer selects the node); until then, nothing to do.
    while :; do sleep 3600; done
}

case "$step" in
    gpu | nics | nvlink | verdict | hold) "$step" ;;
    *) echo "unknown step: $step" >&2; exit 2 ;;
esac
