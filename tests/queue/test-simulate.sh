#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# devplane simulate with Kueue's objects: what each ClusterQueue admits and
# holds (text and -o json), the admitted pods placed on their flavors'
# nodes, unknown Kueue fields as warnings, bad values as one error (exit 2).
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$DEVPLANE" simulate -f data/gpu-flavors.yaml >"$tmp/out" 2>"$tmp/err" || fail "simulate exited $?"
grep -q 'ClusterQueue research, BestEffortFIFO: 2 admitted, 1 pending; example.com/gpu a100 4/4 example.com/gpu t4 2/2' "$tmp/out" || fail "queue line: $(cat "$tmp/out")"
grep -Eq '^  default/train-b +Job +Admitted +example.com/gpu=t4$' "$tmp/out" || fail "train-b on t4"
grep -q "Pending: couldn't assign flavors to pod set main: insufficient quota for example.com/gpu in flavor a100, previously considered podsets requests (0) + current podset request (8) > maximum capacity (4), insufficient quota for example.com/gpu in flavor t4, previously considered podsets requests (0) + current podset request (8) > maximum capacity (2)" "$tmp/out" || fail "train-c message"
# admitted pods land on their flavor's nodes; the pending Job has no pods
grep -Eq '^default/train-b-0 +Running +t4-0 ' "$tmp/out" || fail "train-b-0 not on t4-0"
grep -Eq '^default/train-a-[01] +Running +a100-0 ' "$tmp/out" || fail "train-a not on a100-0"
! grep -q 'train-c-0' "$tmp/out" || fail "pending Job stood up a pod"
grep -q 'ClusterQueue research: spec: unknown field "colour" (line [0-9]*): not a field devplane reads, ignored' "$tmp/err" || fail "no warning: $(cat "$tmp/err")"

"$DEVPLANE" simulate -f data/gpu-flavors.yaml -o json >"$tmp/json" 2>/dev/null
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
q = d["asWritten"]["queues"]
cq = q["clusterQueues"][0]
assert cq["name"] == "research" and cq["admitted"] == 2 and cq["pending"] == 1, cq
w = {x["name"]: x for x in cq["workloads"]}
assert w["default/train-a"]["flavors"] == {"example.com/gpu": "a100"}, w
assert w["default/train-c"]["state"] == "Pending" and w["default/train-c"]["reason"] == "Pending", w
assert w["default/train-c"]["message"].startswith("couldn't assign flavors to pod set main: "), w
PY

# plain Pods: the admitted one runs, the other is held by Kueue's scheduling gate
"$DEVPLANE" simulate -f data/plain-pods.yaml >"$tmp/out" 2>/dev/null || fail "plain pods: exit $?"
grep -Eq '^default/a +Running +n1 ' "$tmp/out" || fail "pod a: $(cat "$tmp/out")"
grep -Eq '^default/b +Pending .*Scheduling is blocked due to non-empty scheduling gates' "$tmp/out" || fail "pod b not gated"
grep -q "Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor spot, 2 more needed" "$tmp/out" || fail "pod b message"

# preemption: the urgent Job evicts the running low-priority Workload and runs
"$DEVPLANE" simulate -f data/preemption.yaml >"$tmp/out" 2>/dev/null || fail "preemption: exit $?"
grep -Eq '^default/train-urgent-0 +Running +a100-0 ' "$tmp/out" || fail "urgent not running: $(cat "$tmp/out")"
grep -q '      preempted default/batch (InClusterQueue, cycle 1)' "$tmp/out" || fail "preemptor line: $(cat "$tmp/out")"
grep -q '      preempted by default/train-urgent in cycle 1 (InClusterQueue)' "$tmp/out" || fail "victim line"
"$DEVPLANE" simulate -f data/preemption.yaml -o json >"$tmp/json" 2>/dev/null
python3 - "$tmp/json" <<'PY'
import json, sys
cq = json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"][0]
w = {x["name"]: x for x in cq["workloads"]}
v = w["default/batch"]
assert v["state"] == "Pending" and v["preempted"]["by"] == "default/train-urgent", v
assert v["preempted"]["reason"] == "InClusterQueue" and v["preempted"]["cycle"] == 1, v
assert v["preempted"]["message"] == ("Preempted to accommodate a workload (UID: UNKNOWN, JobUID: UNKNOWN) due to "
                                     "prioritization in the ClusterQueue; preemptor path: /research; preemptee path: /research"), v
u = w["default/train-urgent"]
assert u["state"] == "Admitted" and u["cycle"] == 2, u
assert u["preemptedWorkloads"] == ["default/batch (InClusterQueue, cycle 1)"], u
PY

# fair sharing: the tournament admits b's Job (share 625 after it) over c's (750)
"$DEVPLANE" simulate -f data/fair-sharing.yaml --kueue-fair-sharing >"$tmp/out" 2>/dev/null || fail "fair: exit $?"
grep -q '^Kueue admission (3 cycles, fair sharing)$' "$tmp/out" || fail "fair header: $(cat "$tmp/out")"
grep -q '^ClusterQueue b (cohort pool), BestEffortFIFO: 2 admitted, 0 pending; example.com/gpu gpu 5/0; weighted share 625$' "$tmp/out" || fail "fair b line"
grep -Eq '^  default/b-train +Job +Admitted ' "$tmp/out" || fail "fair: b-train not admitted"
grep -Eq '^  default/c-train +Job +Pending' "$tmp/out" || fail "fair: c-train admitted"
"$DEVPLANE" simulate -f data/fair-sharing.yaml >"$tmp/out" 2>/dev/null || fail "classical: exit $?"
grep -Eq '^  default/c-train +Job +Admitted ' "$tmp/out" || fail "classical: c-train not admitted first"
! grep -q 'weighted share' "$tmp/out" || fail "classical: weighted share printed"

# no Kueue object: the label means nothing, the Job runs, one warning says so
"$DEVPLANE" simulate -f data/no-kueue.yaml >"$tmp/out" 2>"$tmp/err" || fail "no-kueue: exit $?"
grep -Eq '^default/train-1 +Running ' "$tmp/out" || fail "no-kueue Job not running: $(cat "$tmp/out")"
! grep -q 'Kueue admission' "$tmp/out" || fail "no-kueue printed a queue section"
grep -q 'warning: 1 Job(s)/Pod(s) labelled kueue.x-k8s.io/queue-name and no Kueue object' "$tmp/err" || fail "no-kueue warning: $(cat "$tmp/err")"

# bad values: one error with the field path, exit 2
sed 's/nominalQuota: 4/nominalQuota: -4/' data/gpu-flavors.yaml >"$tmp/bad.yaml"
set +e
"$DEVPLANE" simulate -f "$tmp/bad.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "negative quota: exit $rc"
grep -q 'ClusterQueue research: spec.resourceGroups\[0\].flavors\[0\].resources\[0\].nominalQuota: must be greater than or equal to 0' "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "partial output"
sed 's/queueingStrategy: .*//; s/  namespaceSelector: {}/  namespaceSelector: {}\n  queueingStrategy: Fifo/' data/gpu-flavors.yaml >"$tmp/bad2.yaml"
set +e
"$DEVPLANE" simulate -f "$tmp/bad2.yaml" >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "bad strategy: exit $rc"
grep -q 'spec.queueingStrategy: unsupported value "Fifo": supported values: StrictFIFO, BestEffortFIFO' "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo ok
