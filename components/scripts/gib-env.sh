#!/bin/sh
# gib-env: hold a GKE rdma gate pod's NCCL environment, which is the pool's workers', to the gIB
# installer on its node, before the test runs.
#
# Usage: gib-env.sh SET_NCCL_ENV
#
# Fails (exit 1, the reason in the termination log) when the node has no installer script at
# SET_NCCL_ENV, or not the tuner profile NCCL_TUNER_CONFIG_PATH names. Prints a WARNING line for each
# NCCL_* value the installer's script sets otherwise than this environment. It changes nothing: the gate
# measures what the workers run.
#
# Reads from the environment:
#   CHECK            what is checked, for the messages (e.g. "pool a4")
#   NCCL_*           the pool's NCCL settings, NCCL_TUNER_CONFIG_PATH among them
#   TERMINATION_LOG  where a failure also goes (default /dev/termination-log)

set -u
script=${1:?usage: gib-env.sh SET_NCCL_ENV}
termination=${TERMINATION_LOG:-/dev/termination-log}
check=${CHECK:-fabric check}

fail() {
    echo "FAIL $check: $*" | tee "$termination" >&2
    exit 1
}

[ -r "$script" ] || fail "no $script: is the gIB installer on the node?"
tuner=${NCCL_TUNER_CONFIG_PATH:-}
if [ -n "$tuner" ] && [ ! -r "$tuner" ]; then
    fail "the pool's NCCL tuner profile $tuner is not in the node's gIB installer, which has:" \
        "$(ls "$(dirname "$tuner")" 2>/dev/null | tr '\n' ' ')"
fi

# What the script would set, read in a child shell; bash, as upstream sources it, where the image has it.
ours=$(env | grep '^NCCL_' | sort)
# shellcheck disable=SC2016 # $1 is the child shell's
theirs=$("$(command -v bash || echo sh)" -c '. "$1" >/dev/null 2>&1; env' gib-env "$script" | grep '^NCCL_' | sort)
printf '%s\n' "$theirs" | grep -vxF -e "$ours" | while IFS= read -r line; do
    [ -n "$line" ] || continue
    name=${line%%=*}
    now=$(printf '%s\n' "$ours" | grep "^$name=" || echo "without $name")
    echo "WARNING $check: the gIB installer's $(basename "$script") sets $line; the pool's workers run $now"
done
exit 0
