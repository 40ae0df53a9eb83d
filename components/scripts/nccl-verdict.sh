#!/bin/sh
# nccl-verdict: judge an nccl-tests log against a fabric's bus bandwidth floor.
#
# Usage: nccl-verdict.sh LOG
#
# Reads from the environment:
#   CHECK            what is checked, for the messages (e.g. "pool p5")
#   FLOOR_GBS        the least bus bandwidth, in GB/s, at the largest message size
#   MAX_BYTES        the largest message size the test was asked for, in bytes
#   RANKS            the ranks (GPUs) the test should run on
#   NETWORKS         the NCCL networks that are the fabric, comma-separated (IB, Libfabric, ...; a
#                    trailing * matches a prefix); empty accepts any network, Socket included
#   MIN_NCCL         the least NCCL version the fabric's settings need (e.g. 2.21: RoCE with no
#                    NCCL_IB_GID_INDEX); the run fails below it, and when the log states no version;
#                    empty accepts any
#   NVLS             1: the ranks share multi-node NVLink (GB200 / GB300), and NCCL must log that it set
#                    NVLink SHARP up ("NVLS comm", NCCL_DEBUG=INFO); empty: not required
#   MPIRUN_STATUS    mpirun's exit status (default 0)
#   LOGS             where the whole log can be read, added to the verdict (e.g. a kubectl command)
#   TERMINATION_LOG  where the one-line verdict also goes (default /dev/termination-log), so the
#                    pod's status, and Pulumi's error, carry it
#
# Prints the bus bandwidth per size and the average, then one line starting PASS or FAIL. Exits 0 on
# PASS, 1 on FAIL. Plain POSIX sh and awk: it runs in whatever image carries nccl-tests.

set -u
log=${1:?usage: nccl-verdict.sh LOG}
termination=${TERMINATION_LOG:-/dev/termination-log}

if [ ! -r "$log" ]; then
    verdict="FAIL ${CHECK:-fabric check}: no nccl-tests output at $log"
    echo "$verdict"
    echo "$verdict" >"$termination" 2>/dev/null
    exit 1
fi

awk \
    -v check="${CHECK:-fabric check}" \
    -v floor="${FLOOR_GBS:?FLOOR_GBS is required}" \
    -v max_bytes="${MAX_BYTES:?MAX_BYTES is required}" \
    -v ranks="${RANKS:-0}" \
    -v networks="${NETWORKS:-}" \
    -v min_nccl="${MIN_NCCL:-}" \
    -v nvls="${NVLS:-}" \
    -v status="${MPIRUN_STATUS:-0}" \
    -v logs="${LOGS:-}" \
    -v termination="$termination" '
function size_text(bytes) {
    if (bytes >= 1073741824 && bytes % 1073741824 == 0) return (bytes / 1073741824) "G"
    if (bytes >= 1048576 && bytes % 1048576 == 0) return (bytes / 1048576) "M"
    if (bytes >= 1024 && bytes % 1024 == 0) return (bytes / 1024) "K"
    return bytes
}
function gbs(value) { return sprintf("%.2f GB/s", value) }
# 2.21 -> 22100, 2.20.5 -> 22005: comparable as numbers.
function version_code(text,    part) {
    split(text, part, ".")
    return part[1] * 10000 + part[2] * 100 + part[3]
}
# NCCL_VERSION_CODE: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9 (nccl.h.in NCCL_VERSION).
function code_version(code) {
    if (code < 10000) return int(code / 1000) "." int((code % 1000) / 100) "." (code % 100)
    return int(code / 10000) "." int((code % 10000) / 100) "." (code % 100)
}
function saw_nccl(text) {
    if (nccl == "" || version_code(text) < version_code(nccl)) nccl = text
}
BEGIN {
    accepted = split(networks, want, ",")
    header = 0; rows = 0; wrong = 0; sum = 0; avg = ""; ranks_seen = 0; used = ""; failure = ""; oob = ""
    nccl = ""; library = ""; nvls_seen = 0
}
# mpirun --tag-output and srun -l put the rank before each line.
{ sub(/^\[[0-9]+,[0-9]+\]<std(out|err)>:/, ""); sub(/^[0-9]+: /, "") }
# NCCL_DEBUG=INFO names the network each communicator uses; a fabric that is wired wrong falls back to Socket.
/NCCL INFO Using network / {
    name = $0
    sub(/.*NCCL INFO Using network /, "", name)
    sub(/[ \t\r]+$/, "", name)
    if (!(name in seen)) { seen[name] = 1; used = used (used == "" ? "" : ", ") name }
    next
}
# NCCL logs this once NVLink SHARP is set up for a communicator (src/transport/nvls.cc): across nodes, only with
# multi-node NVLink and an IMEX channel.
/NCCL INFO NVLS comm / { nvls_seen = 1; next }
# Each rank logs "NCCL version 2.28.3+cuda12.9": as an INFO line, or (NCCL before 2.23, NCCL_DEBUG=INFO
# into stdout) bare (NVIDIA/nccl src/init.cc showVersion). The lowest one counts.
/NCCL version [0-9]+\.[0-9]+\.[0-9]+/ {
    match($0, /NCCL version [0-9]+\.[0-9]+\.[0-9]+/)
    saw_nccl(substr($0, RSTART + 13, RLENGTH - 13))
    next
}
# nccl-tests 2.17.4 and later also name the library they loaded (src/util.cu): "nccl-library=22803",
# which stands in when no rank logged its version.
/^# nccl-tests version .* nccl-library=[0-9]+/ {
    code = $0
    sub(/.* nccl-library=/, "", code)
    sub(/[^0-9].*/, "", code)
    library = code_version(code + 0)
    next
}
# The failure lines of nccl-tests itself (src/common.h): NCCL and CUDA errors, timeouts, version and GPU mismatches.
/Test NCCL failure|Test CUDA failure|Test failure|Test timeout|Incompatible NCCL versions|Invalid number of GPUs/ {
    if (failure == "") { failure = $0; sub(/^[ \t]+/, "", failure) }
    next
}
# The device table of nccl-tests: one "#  Rank  N Group ..." line per rank.
/^#[ \t]+Rank[ \t]+[0-9]+[ \t]+Group/ { ranks_seen++; next }
/^# Out of bounds values/ { oob = $0; next }
/^# Avg bus bandwidth/ { avg = $NF; next }
# The column header: find the out-of-place and in-place busbw and #wrong columns by name.
/^#/ && / size / && /busbw/ {
    header = 1; seen_bw = 0; seen_wrong = 0
    for (i = 2; i <= NF; i++) {
        if ($i == "busbw") { seen_bw++; if (seen_bw == 1) oop_bw = i - 1; else ip_bw = i - 1 }
        if ($i == "#wrong") { seen_wrong++; if (seen_wrong == 1) oop_wrong = i - 1; else ip_wrong = i - 1 }
    }
    next
}
/^#/ { next }
header && $1 ~ /^[0-9]+$/ && NF >= oop_bw {
    rows++
    size[rows] = $1; bw[rows] = $oop_bw + 0; ibw[rows] = (ip_bw ? $ip_bw + 0 : 0)
    sum += $oop_bw
    if (oop_wrong && $oop_wrong ~ /^[0-9]+$/ && $oop_wrong + 0 > 0) wrong += $oop_wrong
    if (ip_wrong && $ip_wrong ~ /^[0-9]+$/ && $ip_wrong + 0 > 0) wrong += $ip_wrong
}
END {
    if (rows > 0) {
        printf "%14s %18s %18s\n", "size", "busbw out-of-place", "busbw in-place"
        for (r = 1; r <= rows; r++) printf "%14s %18s %18s\n", size_text(size[r]), gbs(bw[r]), gbs(ibw[r])
        if (avg == "") avg = sprintf("%.2f", sum / rows)
        printf "average bus bandwidth: %s GB/s\n", avg
    }
    if (used != "") printf "NCCL network: %s\n", used
    if (nccl == "") nccl = library
    if (nccl != "") printf "NCCL version: %s\n", nccl

    largest = rows ? size[rows] + 0 : 0
    measured = rows ? bw[rows] : 0
    where = rows ? " at " size_text(largest) : ""
    reason = ""
    # Too old a NCCL is the cause whatever else went wrong (on RoCE it may be why the test failed).
    if (min_nccl != "" && nccl != "" && version_code(nccl) < version_code(min_nccl))
        reason = "NCCL " nccl " is older than " min_nccl ", which this fabric needs (RoCE with no " \
            "NCCL_IB_GID_INDEX: an older NCCL uses GID 0, link-local RoCE v1, not the address of the pod): " \
            "use an image with NCCL " min_nccl " or later"
    else if (failure != "") reason = "the test failed: " failure
    else if (status != 0) reason = "mpirun exited with status " status
    else if (rows == 0) reason = "the output has no results (the test did not start, or its output was cut)"
    else if (largest < max_bytes + 0) reason = "the output stops at " size_text(largest) " of " size_text(max_bytes) " (cut short)"
    else if (wrong > 0) reason = wrong " wrong values (#wrong): the data is corrupted on the way"
    else if (oob != "" && oob !~ /OK[ \t\r]*$/) reason = "nccl-tests reports: " oob
    else if (ranks + 0 > 0 && ranks_seen > 0 && ranks_seen != ranks + 0)
        reason = "the test ran on " ranks_seen " of " ranks " GPUs"
    if (reason == "" && min_nccl != "" && nccl == "")
        reason = "the log states no NCCL version (NCCL_DEBUG=INFO prints it): NCCL " min_nccl \
            " or later, which this fabric needs, is not proven"
    if (reason == "" && accepted > 0) {
        if (used == "") reason = "the log names no NCCL network (NCCL_DEBUG=INFO): the fabric is not proven"
        else {
            for (name in seen) {
                ok = 0
                for (w = 1; w <= accepted; w++) {
                    if (name == want[w]) ok = 1
                    # A trailing * matches a versioned name (GPUDirectTCPX_v7, IBext_v8).
                    if (want[w] ~ /\*$/ && index(name, substr(want[w], 1, length(want[w]) - 1)) == 1) ok = 1
                }
                if (!ok) { reason = "NCCL used network " name ", not the fabric (" networks "): it fell back"; break }
            }
        }
    }
    if (reason == "" && nvls == "1" && !nvls_seen)
        reason = "NCCL did not set NVLS up (no \"NVLS comm\" line with NCCL_DEBUG=INFO): the ranks do not share " \
            "multi-node NVLink (no IMEX channel, or not in one NVLink domain), so NVLink across the nodes is not proven"
    if (reason == "" && measured < floor + 0)
        reason = gbs(measured) " bus bandwidth" where " is under the floor of " gbs(floor + 0)

    if (reason == "") {
        line = "PASS " check ": " gbs(measured) " bus bandwidth" where " (floor " gbs(floor + 0) "), average " avg " GB/s"
        if (used != "") line = line ", network " used
        if (min_nccl != "") line = line ", NCCL " nccl
        if (nvls == "1") line = line ", NVLS set up"
    } else {
        line = "FAIL " check ": " reason
        if (reason !~ /under the floor/) {
            if (rows > 0) line = line "; largest size " size_text(largest) " at " gbs(measured)
            line = line " (floor " gbs(floor + 0) ")"
        }
    }
    if (logs != "") line = line "; logs: " logs
    print line
    print line > termination
    exit (reason == "" ? 0 : 1)
}
' "$log"
