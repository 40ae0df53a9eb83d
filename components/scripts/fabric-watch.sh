#!/bin/sh
# fabric-watch: prove a pool's fabric on scale-up. Run on a schedule (a CronJob) and on demand; each run moves
# the check one step:
#
#   the check's Job finished    record its verdict in the result ConfigMap, post an event, delete the Job
#   no Job, verdict recorded    nothing: the fabric is proven (or found wanting) for the pool as configured
#     for this configuration
#   no Job, no verdict          start the Job (and its PodGroup) once the pool has NODES checked nodes
#   the Job is running          nothing
#
# Reads from the environment:
#   NAMESPACE      where the check runs
#   JOB            the check's Job (and Service, and PodGroup) name
#   NODES          the nodes the test spans
#   NODE_SELECTOR  the label selector of the pool's nodes that may take it (checked ones, where a node check runs)
#   FINGERPRINT    the digest of the pool and the check's settings, which a recorded verdict must match
#   RESULT         the ConfigMap the verdict goes in (delete it to run the check again)
#   TEMPLATE       the file with the Job (and its PodGroup) to create
#
# Plain POSIX sh and kubectl.

set -eu
ns=${NAMESPACE:?NAMESPACE is required}
job=${JOB:?JOB is required}
result=${RESULT:?RESULT is required}
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)

escaped() {  # a JSON string's content
    printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr -d '\n\r'
}

event() {  # event TYPE REASON MESSAGE: an event on the check's Job
    kubectl create -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Event",
 "metadata": {"generateName": "$job.", "namespace": "$ns"},
 "involvedObject": {"apiVersion": "batch/v1", "kind": "Job", "name": "$job", "namespace": "$ns"},
 "reason": "$2", "message": "$(escaped "$3")", "type": "$1",
 "source": {"component": "gpu-training-fabric-watch"},
 "firstTimestamp": "$now", "lastTimestamp": "$now", "count": 1}
EOF
}

record() {  # record passed|failed: the verdict (pod 0's termination message) in the result ConfigMap
    verdict=$(kubectl -n "$ns" get pods -l "job-name=$job,batch.kubernetes.io/job-completion-index=0" \
        -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.message}' 2>/dev/null || true)
    [ -n "$verdict" ] || verdict="$1 (pod 0 left no verdict: kubectl logs -n $ns job/$job)"
    kubectl -n "$ns" create configmap "$result" --dry-run=client -o yaml \
        --from-literal=passed="$([ "$1" = passed ] && echo true || echo false)" \
        --from-literal=verdict="$verdict" --from-literal=fingerprint="${FINGERPRINT:?}" \
        --from-literal=time="$now" | kubectl apply -f -
    if [ "$1" = passed ]; then event Normal FabricCheckPassed "$verdict"; else event Warning FabricCheckFailed "$verdict"; fi
    echo "$verdict"
    kubectl -n "$ns" delete -f "${TEMPLATE:?}" --ignore-not-found --wait=false
}

state=$(kubectl -n "$ns" get job "$job" --ignore-not-found \
    -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}{"job"}')
case "$state" in
    *Complete*) record passed ;;
    *Failed*) record failed ;;
    job) echo "the check is running: kubectl logs -n $ns job/$job" ;;
    *)
        recorded=$(kubectl -n "$ns" get configmap "$result" --ignore-not-found -o jsonpath='{.data.fingerprint}')
        if [ "$recorded" = "$FINGERPRINT" ]; then
            echo "recorded: $(kubectl -n "$ns" get configmap "$result" -o jsonpath='{.data.verdict}')"
            exit 0
        fi
        ready=$(kubectl get nodes -l "${NODE_SELECTOR:?}" -o name | wc -l | tr -d ' ')
        if [ "$ready" -ge "${NODES:?}" ]; then
            kubectl -n "$ns" create -f "$TEMPLATE"
            event Normal FabricCheckStarted "the pool has $ready checked nodes: testing its fabric on $NODES"
        else
            echo "waiting: the pool has $ready of the $NODES checked nodes the test needs"
        fi
        ;;
esac
