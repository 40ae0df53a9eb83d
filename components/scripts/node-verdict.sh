#!/bin/sh
# node-verdict: judge one GPU node's check from what node-check.sh recorded.
#
# Usage: node-verdict.sh RESULTS
#
# RESULTS holds, each written by a step of node-check.sh:
#   gpus.csv, gpus.rc      nvidia-smi --query-gpu=index,pci.bus_id,ecc.errors.uncorrected.volatile.total,
#                          remapped_rows.pending,remapped_rows.failure --format=csv,noheader; its status
#   clocks.csv             nvidia-smi --query-gpu=index,clocks_event_reasons.hw_slowdown,
#                          clocks_event_reasons.sw_thermal_slowdown --format=csv,noheader (optional)
#   xid.log                the kernel's "NVRM: Xid" lines since boot
#   diag.txt, diag.rc      dcgmi diag -r LEVEL, as printed; its status
#   nics.txt               one line per fabric NIC found: "rdma NAME STATE GBPS" or "net NAME OPERSTATE MBPS"
#   nvlink.log, nvlink.rc  all_reduce_perf across the node's GPUs; its status (absent: not run)
#   fabric.txt             rack-scale NVLink pools only: one line per GPU from nvidia-smi -q's Fabric section,
#                          "GPU|State|Status|CliqueId" (absent: not read)
#
# Reads from the environment:
#   NODE_NAME        the node, for the messages
#   EXPECT_GPUS      the GPUs the node must show
#   RDMA_NAMES       RDMA devices that must be ACTIVE, by name, space-separated (empty: none by name)
#   RDMA_COUNT       ACTIVE RDMA devices there must be at least (0: none)
#   NETDEVS          interfaces that must be up, space-separated
#   MIN_LINK_GBPS    the least line rate of each NIC, in Gbps (0: not judged)
#   FLOOR_GBS        the all_reduce floor in GB/s at MAX_BYTES (0: measured, not judged)
#   MAX_BYTES        the all_reduce's largest message, in bytes
#   SCRIPTS          where nccl-verdict.sh is (default: this script's folder)
#   NVLINK_FABRIC    set on rack-scale NVLink pools: every GPU must have joined its NVLink domain
#
# Prints one line per part (ok, note or FAIL), then one line starting PASS or FAIL that names every failure.
# Exits 0 on PASS, 1 on FAIL. Plain POSIX sh and awk.

set -u
results=${1:?usage: node-verdict.sh RESULTS}
node=${NODE_NAME:-this node}
scripts=${SCRIPTS:-$(dirname "$0")}
failures=""

fail() {
    echo "FAIL $1"
    failures="${failures}${failures:+; }$1"
}

read_rc() {  # read_rc FILE: the status a step recorded, 127 when it recorded none
    if [ -r "$1" ]; then tr -dc '0-9' <"$1"; else echo 127; fi
}

# GPUs: every one present, no uncorrected ECC error, no row remap pending or failed.
rc=$(read_rc "$results/gpus.rc")
if [ "${rc:-1}" != 0 ] || [ ! -s "$results/gpus.csv" ]; then
    fail "gpus: nvidia-smi did not answer (status ${rc:-?}): driver or GPU missing"
else
    found=$(awk -F', *' '
        function bad(v) { return v ~ /^[Yy]es$/ || (v ~ /^[0-9]+$/ && v + 0 > 0) }
        NF >= 5 {
            gpus++
            if ($3 ~ /^[0-9]+$/ && $3 + 0 > 0) print "GPU " $1 " (" $2 "): " $3 " uncorrected ECC errors"
            if (bad($4)) print "GPU " $1 " (" $2 "): row remap pending (reset the GPU)"
            if (bad($5)) print "GPU " $1 " (" $2 "): row remap failed (replace the GPU)"
        }
        END { print "count " gpus + 0 }
    ' "$results/gpus.csv")
    count=$(echo "$found" | awk '/^count /{ print $2 }')
    problems=$(echo "$found" | grep -v '^count ')
    if [ "$count" != "${EXPECT_GPUS:?EXPECT_GPUS is required}" ]; then
        fail "gpus: nvidia-smi sees $count of $EXPECT_GPUS GPUs"
    fi
    if [ -n "$problems" ]; then
        fail "gpus: $(echo "$problems" | paste -sd ';' - | sed 's/;/; /g')"
    fi
    [ "$count" = "$EXPECT_GPUS" ] && [ -z "$problems" ] &&
        echo "ok   gpus: $count GPUs, no uncorrected ECC errors, no row remaps pending or failed"
fi

# Clocks: a GPU slowed down by hardware (power brake, thermal) at rest is a node to look at.
if [ -s "$results/clocks.csv" ]; then
    slow=$(awk -F', *' 'NF >= 3 && ($2 == "Active" || $3 == "Active") { printf "%sGPU %s", sep, $1; sep = ", " }' \
        "$results/clocks.csv")
    if [ -n "$slow" ]; then fail "clocks: hardware or thermal slowdown active on $slow"; else echo "ok   clocks: no slowdown"; fi
else
    echo "note clocks: not read (this driver names the fields otherwise)"
fi

# XIDs since boot, judged by NVIDIA's XID catalog for Ampere to GB200 (docs.nvidia.com/deploy/xid-errors/
# analyzing-xid-catalog.html). Fatal, the GPU, its memory or its links cannot be trusted until reset or replaced:
# 48 DBE, 64 row-remap failure, 74 NVLink, 79 fallen off the bus, 94/95 contained and uncontained ECC, 119/120 GSP,
# 140 unrecovered ECC, and the newer codes whose immediate action is RESET_GPU: 143 GPU initialization (R575),
# 155 NVLink software-defined error, 156 resource retirement (takes effect at reset), 158 GPU fatal timeout.
# 144-150, the NVLink5 errors (149 NETIR among them), are fatal or not by subcode; the driver sums up what each
# needs in XID 154, "GPU recovery action changed from A to B", whose latest line per GPU is judged: fatal unless it
# is back to 0x0 (None). Any other XID is noted.
if [ -s "$results/xid.log" ]; then
    xids=$(awk '
        /NVRM: Xid/ {
            line = $0
            sub(/.*NVRM: Xid \(/, "", line)
            pci = line; sub(/\).*/, "", pci)
            sub(/^[^)]*\): */, "", line)
            code = line; sub(/[^0-9].*/, "", code)
            if (code == "") next
            if (code == "154") {
                # The action it changed to: "to 0x2 (Node Reboot Required)"; none given counts as needing one.
                action = "unknown action"
                if (match(line, /to 0x[0-9a-fA-F]+( \([^)]*\))?/)) action = substr(line, RSTART + 3, RLENGTH - 3)
                if (!(pci in recovery)) order[++gpus] = pci
                recovery[pci] = action
                next
            }
            fatal = (code ~ /^(48|64|74|79|94|95|119|120|140|143|155|156|158)$/)
            key = code " " pci
            if (!(key in seen)) { seen[key] = 1; print (fatal ? "fatal" : "other") " XID " code " on " pci }
        }
        END {
            for (i = 1; i <= gpus; i++) {
                pci = order[i]; action = recovery[pci]
                print (action ~ /^0x0+( |$)/ ? "other" : "fatal") " XID 154 (recovery action " action ") on " pci
            }
        }' "$results/xid.log")
    fatal=$(echo "$xids" | awk '$1 == "fatal" { $1 = ""; sub(/^ /, ""); printf "%s%s", sep, $0; sep = ", " }')
    other=$(echo "$xids" | awk '$1 == "other" { $1 = ""; sub(/^ /, ""); printf "%s%s", sep, $0; sep = ", " }')
    [ -n "$fatal" ] && fail "xid: $fatal"
    [ -n "$other" ] && echo "note xid: $other"
    [ -z "$fatal" ] && [ -z "$other" ] && echo "ok   xid: none"
else
    echo "ok   xid: none"
fi

# DCGM diagnostics: every test row that says Fail, by name; a diagnostic that did not run fails too.
rc=$(read_rc "$results/diag.rc")
if [ -s "$results/diag.txt" ]; then
    failed=$(awk -F'|' 'NF >= 3 {
            name = $2; result = $3
            gsub(/^[ \t]+|[ \t]+$/, "", name); gsub(/^[ \t]+|[ \t]+$/, "", result)
            if (result ~ /^Fail/) { printf "%s%s (%s)", sep, name, result; sep = ", " }
        }' "$results/diag.txt")
    warned=$(awk -F'|' 'NF >= 3 {
            name = $2; result = $3
            gsub(/^[ \t]+|[ \t]+$/, "", name); gsub(/^[ \t]+|[ \t]+$/, "", result)
            if (result ~ /^Warn/) { printf "%s%s", sep, name; sep = ", " }
        }' "$results/diag.txt")
    passed=$(grep -c '| *Pass' "$results/diag.txt")
    if [ -n "$failed" ]; then
        fail "dcgm: $failed"
    elif [ "$rc" != 0 ] || [ "$passed" = 0 ]; then
        fail "dcgm: dcgmi diag did not complete (status $rc): $(grep -v '^[[:space:]]*$' "$results/diag.txt" | tail -n 1)"
    else
        echo "ok   dcgm: $passed tests passed"
    fi
    [ -n "$warned" ] && echo "note dcgm: warnings from $warned"
else
    fail "dcgm: no diagnostic output (status $rc)"
fi

# Fabric NICs: each named RDMA device ACTIVE, enough ACTIVE ones, each GPU netdev up, each at its speed.
nics="$results/nics.txt"
[ -r "$nics" ] || nics=/dev/null
min=${MIN_LINK_GBPS:-0}
speed=""
[ "$min" -gt 0 ] && speed=" at >= $min Gbps"
missing=""
for name in ${RDMA_NAMES:-}; do
    line=$(awk -v n="$name" '$1 == "rdma" && $2 == n' "$nics")
    if [ -z "$line" ]; then
        missing="$missing${missing:+, }$name missing"
    else
        echo "$line" | awk -v min="$min" '{
            if ($3 != "ACTIVE") print $2 " " $3
            else if (min > 0 && $4 + 0 < min + 0) print $2 " at " $4 " Gbps"
        }' >"$results/.nic" 2>/dev/null || true
        [ -s "$results/.nic" ] && missing="$missing${missing:+, }$(cat "$results/.nic")"
    fi
done
rm -f "$results/.nic"
want=${RDMA_COUNT:-0}
if [ "$want" -gt 0 ]; then
    active=$(awk -v min="$min" '$1 == "rdma" && $3 == "ACTIVE" && (min == 0 || $4 + 0 >= min + 0)' "$nics" | wc -l | tr -d ' ')
    [ "$active" -lt "$want" ] && missing="$missing${missing:+, }$active of $want RDMA devices ACTIVE$speed"
fi
for name in ${NETDEVS:-}; do
    line=$(awk -v n="$name" '$1 == "net" && $2 == n' "$nics")
    if [ -z "$line" ]; then
        missing="$missing${missing:+, }$name missing"
    else
        state=$(echo "$line" | awk '{ print $3 }')
        mbps=$(echo "$line" | awk '{ print $4 + 0 }')
        if [ "$state" != up ]; then
            missing="$missing${missing:+, }$name $state"
        elif [ "$min" -gt 0 ] 2>/dev/null && [ "$mbps" -lt $((min * 1000)) ]; then
            missing="$missing${missing:+, }$name at $((mbps / 1000)) Gbps"
        fi
    fi
done
if [ -n "$missing" ]; then
    fail "nics: $missing"
elif [ -n "${RDMA_NAMES:-}${NETDEVS:-}" ] || [ "$want" -gt 0 ]; then
    echo "ok   nics: every fabric NIC up$speed"
else
    echo "ok   nics: none expected"
fi

# NVLink: the node's GPUs all_reduce at the floor, judged as the fabric check judges its runs.
if [ -e "$results/nvlink.rc" ]; then
    out=$(TERMINATION_LOG=/dev/null CHECK="node $node NVLink" RANKS="$EXPECT_GPUS" NETWORKS="" MIN_NCCL="" \
        MPIRUN_STATUS="$(read_rc "$results/nvlink.rc")" FLOOR_GBS="${FLOOR_GBS:-0}" \
        MAX_BYTES="${MAX_BYTES:?MAX_BYTES is required}" LOGS="" sh "$scripts/nccl-verdict.sh" "$results/nvlink.log")
    line=$(echo "$out" | tail -n 1)
    case "$line" in
        PASS*) echo "ok   nvlink: ${line#PASS }" ;;
        *) fail "nvlink: ${line#FAIL }" ;;
    esac
fi

# NVLink fabric (GB200 / GB300 NVL72): each GPU registered with the rack's NVLink fabric, in a clique. A tray
# whose registration failed can still pass the all_reduce inside it and then break every multi-node NVLink job;
# the NVIDIA DRA driver's ComputeDomain plugin refuses such a GPU too (an empty clique ID).
if [ -n "${NVLINK_FABRIC:-}" ]; then
    fabric="$results/fabric.txt"
    if [ ! -s "$fabric" ]; then
        fail "fabric: nvidia-smi -q shows no NVLink fabric state: the GPUs have not joined an NVLink domain"
    else
        bad=$(awk -F'|' '
            $2 != "Completed" || $3 != "Success" || $4 == "" || $4 == "N/A" {
                printf "%sGPU %s: state %s, status %s, clique %s", sep, $1, $2, $3, ($4 == "" ? "none" : $4); sep = "; "
            }' "$fabric")
        seen=$(grep -c . "$fabric")
        cliques=$(awk -F'|' '{ print $4 }' "$fabric" | sort -u | grep -c .)
        if [ -n "$bad" ]; then
            fail "fabric: $bad"
        elif [ "$seen" != "$EXPECT_GPUS" ]; then
            fail "fabric: $seen of $EXPECT_GPUS GPUs report an NVLink fabric state"
        elif [ "$cliques" != 1 ]; then
            fail "fabric: the node's GPUs are in $cliques NVLink cliques, not one"
        else
            echo "ok   fabric: $seen GPUs registered, clique $(awk -F'|' 'NR == 1 { print $4 }' "$fabric")"
        fi
    fi
fi

if [ -n "$failures" ]; then
    echo "FAIL node $node: $failures"
    exit 1
fi
echo "PASS node $node: GPUs, DCGM, NICs and NVLink checked"
