#!/bin/sh
# fabric-check: one pod of a pool's fabric acceptance gate (an Indexed Job, one pod per node).
#
# Every pod serves sshd. Pod 0 waits until it reaches every pod, runs the NCCL test across all of
# them with mpirun, tells the others to stop, and judges the output with nccl-verdict.sh; its exit
# status is the gate's. The other pods exit 0 once pod 0 is done.
#
# Reads from the environment (set by the Job):
#   JOB_COMPLETION_INDEX  this pod's index
#   NODES, GPUS           pods in the test, GPUs (ranks) on each
#   HOST_PREFIX, SERVICE  pod i is reachable as $HOST_PREFIX-$i.$SERVICE
#   SSH_PORT              the port every pod's sshd listens on
#   MPIRUN, TEST          mpirun and the nccl-tests binary; TEST_ARGS its flags
#   MPI_ARGS              extra mpirun flags for the fabric
#   FORWARD               the environment variables mpirun passes to every rank
#   SETUP                 a shell snippet run first (an image's own environment script), may be empty
#   and what nccl-verdict.sh reads (CHECK, FLOOR_GBS, MAX_BYTES, RANKS, NETWORKS, MIN_NCCL, LOGS, TERMINATION_LOG).
# Where things go, for running it outside a pod: SSH_HOME (/root/.ssh), KEYS_DIR (/etc/fabric-check/ssh),
# SSHD_RUN_DIR (/run/sshd), WORK_DIR (/tmp).

set -u
here=$(dirname "$0")
ssh_home=${SSH_HOME:-/root/.ssh}
keys=${KEYS_DIR:-/etc/fabric-check/ssh}
work=${WORK_DIR:-/tmp}
termination=${TERMINATION_LOG:-/dev/termination-log}
done_file=$work/fabric-check-done
log=$work/nccl-tests.log

if [ -n "${SETUP:-}" ]; then
    eval "$SETUP"
fi

# sshd and the client, keyed by the gate's own key pair (a Secret mounted at /etc/fabric-check/ssh).
mkdir -p "$ssh_home" "${SSHD_RUN_DIR:-/run/sshd}"
chmod 700 "$ssh_home"
cp "$keys/id_ed25519" "$ssh_home/id_ed25519"
cp "$keys/id_ed25519.pub" "$ssh_home/authorized_keys"
chmod 600 "$ssh_home/id_ed25519" "$ssh_home/authorized_keys"
cat >"$ssh_home/config" <<EOF
Host *
    Port ${SSH_PORT}
    IdentityFile $ssh_home/id_ed25519
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
    ConnectTimeout 10
    ConnectionAttempts 6
EOF
ssh-keygen -A >/dev/null
sshd=$(command -v sshd || echo /usr/sbin/sshd)
"$sshd" -p "$SSH_PORT" -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no \
    -o AuthorizedKeysFile="$ssh_home/authorized_keys" -o StrictModes=no || {
    echo "FAIL ${CHECK:-fabric check}: sshd did not start in pod $JOB_COMPLETION_INDEX" | tee "$termination"
    exit 1
}

if [ "$JOB_COMPLETION_INDEX" != 0 ]; then
    echo "pod $JOB_COMPLETION_INDEX: serving sshd on port $SSH_PORT until pod 0 has run the test"
    while [ ! -e "$done_file" ]; do sleep 2; done
    exit 0
fi

hosts=""
i=0
: >"$work/hostfile"
while [ "$i" -lt "$NODES" ]; do
    host="$HOST_PREFIX-$i.$SERVICE"
    hosts="$hosts $host"
    echo "$host slots=$GPUS" >>"$work/hostfile"
    i=$((i + 1))
done

# Image pulls of several GiB finish at different times: wait until every pod answers.
for host in $hosts; do
    until ssh "$host" true 2>/dev/null; do
        echo "waiting for $host"
        sleep 5
    done
done

# The job's environment, and whatever NCCL, libfabric or UCX settings the image's own setup exported.
forward=""
for name in $FORWARD $(env | awk -F= '/^(NCCL|FI|UCX)_[A-Za-z0-9_]*=/ { print $1 }'); do
    case " $forward " in
        *" -x $name "*) ;;
        *) forward="$forward -x $name" ;;
    esac
done

echo "running $TEST $TEST_ARGS on $NODES nodes x $GPUS GPUs"
# shellcheck disable=SC2086 # the flag lists are meant to split into words
{
    "$MPIRUN" --allow-run-as-root -np $((NODES * GPUS)) -N "$GPUS" --hostfile "$work/hostfile" --bind-to none \
        $MPI_ARGS $forward "$TEST" $TEST_ARGS 2>&1
    echo "$?" >"$work/mpirun.status"
} | tee "$log"

for host in $hosts; do
    ssh "$host" touch "$done_file" 2>/dev/null
done

MPIRUN_STATUS=$(cat "$work/mpirun.status" 2>/dev/null || echo 1) TERMINATION_LOG=$termination \
    sh "$here/nccl-verdict.sh" "$log"
