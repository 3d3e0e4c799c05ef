#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# devplane simulate with Kueue's multi-pod workloads: a pod group admitted
# whole (all its pods placed) or held whole (all gated), a group short of
# pods gated with a warning; a JobSet's Jobs stood up as the JobSet
# controller names them, placed on the flavor's node, or not stood up while
# pending (over time: created once admitted); a Job partially admitted runs
# the admitted parallelism; bad values exit 2 with the field path.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# pod groups
"$DEVPLANE" simulate -f data/pod-groups.yaml >"$tmp/out" 2>"$tmp/err" || fail "pod groups: exit $?"
for p in train-leader train-worker-0 train-worker-1; do
        grep -Eq "^default/$p +Running +n1 " "$tmp/out" || fail "$p not on the flavor's node: $(cat "$tmp/out")"
done
for p in big-0 big-1 short-0; do
        grep -Eq "^default/$p +Pending .*Scheduling is blocked due to non-empty scheduling gates" "$tmp/out" || fail "$p not gated"
done
grep -Eq '^  default/train +PodGroup +Admitted ' "$tmp/out" || fail "train not one admitted PodGroup"
grep -Eq '^  default/big +PodGroup +Pending' "$tmp/out" || fail "big not one pending PodGroup"
grep -q "couldn't assign flavors to pod set [0-9a-f]\{8\}: insufficient unused quota for cpu in flavor spot, 6 more needed" "$tmp/out" || fail "big's message"
grep -q 'warning: pod group default/short: 1 of its 3 pods (kueue.x-k8s.io/pod-group-total-count) in the input' "$tmp/err" || fail "short warning: $(cat "$tmp/err")"
"$DEVPLANE" simulate -f data/pod-groups.yaml -o json >"$tmp/json" 2>/dev/null
python3 - "$tmp/json" <<'PY'
import json, sys
cq = json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"][0]
w = {x["name"]: x for x in cq["workloads"]}
t = w["default/train"]
# two roles (leader, workers): two pod sets, all three pods placed
assert t["kind"] == "PodGroup" and len(t["flavors"]) == 2 and t["placedPods"] == 3, t
assert "default/short" not in w, w
PY

# over time: deleting train's three pods ends it; big is admitted then and
# both its pods are created and placed together
{ cat data/pod-groups.yaml; printf -- '---\napiVersion: devplane.io/v1alpha1\nkind: Timeline\nspec:\n  events:\n  - {at: 30s, delete: [train-leader, train-worker-0, train-worker-1]}\n'; } >"$tmp/pg-time.yaml"
"$DEVPLANE" simulate -f "$tmp/pg-time.yaml" -o json >"$tmp/json" 2>/dev/null || fail "groups over time: exit $?"
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
w = {x["name"]: x for x in d["queues"]["clusterQueues"][0]["workloads"]}
assert w["default/train"]["state"] == "Finished", w
assert w["default/big"]["state"] == "Admitted" and w["default/big"]["placedPods"] == 2, w
ev = d["events"]
i = ev.index("t=30s Kueue: default/big admitted in ClusterQueue q")
assert "t=30s default/big-0 bound to n1" in ev[i:] and "t=30s default/big-1 bound to n1" in ev[i:], ev
PY

# explain on a gated pod of the group answers for the group's workload
"$DEVPLANE" explain -f data/pod-groups.yaml big-0 >"$tmp/out" 2>/dev/null || fail "explain big-0: exit $?"
grep -q '^Workload default/big (PodGroup), LocalQueue lq, ClusterQueue q: Pending$' "$tmp/out" || fail "explain big-0: $(cat "$tmp/out")"
grep -Eq '^  pod set [0-9a-f]{8}, flavor spot: --set-quota q/spot/cpu=14 \(\+6\)$' "$tmp/out" || fail "explain big-0 quota"

# JobSet
"$DEVPLANE" simulate -f data/jobset.yaml >"$tmp/out" 2>"$tmp/err" || fail "jobset: exit $?"
for p in train-workers-0-0 train-workers-0-1 train-workers-1-0 train-workers-1-1 train-driver-0-0; do
        grep -Eq "^default/$p +Running +a100-0 " "$tmp/out" || fail "$p not on a100-0: $(cat "$tmp/out")"
done
! grep -q 'default/later-' "$tmp/out" || fail "the pending JobSet stood up pods"
grep -Eq '^  default/train +JobSet +Admitted +workers/cpu=a100,workers/example.com/gpu=a100,driver/cpu=a100$' "$tmp/out" || fail "train's flavors"
grep -q "Pending: couldn't assign flavors to pod set workers: insufficient unused quota for example.com/gpu in flavor a100, 4 more needed" "$tmp/out" || fail "later's message"
sed 's/  network: {enableDNSHostnames: true}/  network: {enableDNSHostnames: true}\n  colour: blue/' data/jobset.yaml >"$tmp/warn.yaml"
"$DEVPLANE" simulate -f "$tmp/warn.yaml" >/dev/null 2>"$tmp/err" || fail "jobset warning: exit $?"
grep -q 'JobSet train: spec: unknown field "colour" (line [0-9]*): not a field devplane reads, ignored' "$tmp/err" || fail "jobset warning: $(cat "$tmp/err")"

# explain for the pending JobSet
"$DEVPLANE" explain -f data/jobset.yaml later >"$tmp/out" 2>/dev/null || fail "explain later: exit $?"
grep -q '^Workload default/later (JobSet), LocalQueue lq, ClusterQueue research: Pending$' "$tmp/out" || fail "explain later: $(cat "$tmp/out")"
grep -q '^  pod set workers, flavor a100: --set-quota research/a100/example.com/gpu=12 (+4)$' "$tmp/out" || fail "explain later quota"

# partial admission
"$DEVPLANE" simulate -f data/partial.yaml >"$tmp/out" 2>/dev/null || fail "partial: exit $?"
for i in 0 1 2 3; do grep -Eq "^default/sweep-$i +Running +n1 " "$tmp/out" || fail "sweep-$i: $(cat "$tmp/out")"; done
! grep -q 'default/sweep-4' "$tmp/out" || fail "more pods than admitted"
grep -q '      partially admitted: main: 4 of 6 pods' "$tmp/out" || fail "partial line"

# over time: the JobSet waits for the Job's quota, is admitted when its pod
# is deleted, and its Jobs' pods are created then (held until admitted)
"$DEVPLANE" simulate -f data/jobset-over-time.yaml -o json >"$tmp/json" 2>/dev/null || fail "over time: exit $?"
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
w = {x["name"]: x for x in d["queues"]["clusterQueues"][0]["workloads"]}
assert w["default/second"]["kind"] == "JobSet" and w["default/second"]["state"] == "Admitted", w
assert w["default/second"]["placedPods"] == 2, w
ev = d["events"]
assert "t=30s Kueue: default/second admitted in ClusterQueue research" in ev, ev
assert "t=30s default/second-w-0-0 bound to a100-0" in ev and "t=30s default/second-w-1-0 bound to a100-0" in ev, ev
PY

# bad values: one error with the field path, exit 2, no output
bad() { # file, expected message
        set +e
        "$DEVPLANE" simulate -f "$1" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        set -e
        [ $rc -eq 2 ] || fail "$1: exit $rc"
        grep -qF "$2" "$tmp/err" || fail "$1: $(cat "$tmp/err")"
        [ ! -s "$tmp/out" ] || fail "$1: partial output"
}
sed 's/    replicas: 2/    replicas: -1/' data/jobset.yaml >"$tmp/b1.yaml"
bad "$tmp/b1.yaml" 'JobSet train: spec.replicatedJobs[0]: replicas: must be between 0 and 10000'
sed 's/pod-group-total-count: "2"/pod-group-total-count: "zero"/' data/pod-groups.yaml >"$tmp/b2.yaml"
bad "$tmp/b2.yaml" 'Pod default/big-0: metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: "zero": must be an integer greater than zero'
sed '/name: short-0/,+2 s/  annotations: {kueue.x-k8s.io\/pod-group-total-count: "3"}//' data/pod-groups.yaml >"$tmp/b4.yaml"
bad "$tmp/b4.yaml" "Pod default/short-0: metadata.annotations[kueue.x-k8s.io/pod-group-total-count]: Required value: both the 'kueue.x-k8s.io/pod-group-total-count' annotation and the 'kueue.x-k8s.io/pod-group-name' label should be set"
cat >"$tmp/b5.yaml" <<'EOF'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: hollow, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  replicatedJobs:
  - name: workers
    template: null
EOF
bad "$tmp/b5.yaml" 'JobSet hollow: spec.replicatedJobs[0].template: spec.template: required'
sed 's/job-min-parallelism: "2"/job-min-parallelism: "6"/' data/partial.yaml >"$tmp/b3.yaml"
bad "$tmp/b3.yaml" 'Job default/sweep: metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: "6": should be between 0 and 5'
echo ok
