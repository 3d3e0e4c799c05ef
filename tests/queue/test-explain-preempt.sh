#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# devplane explain's preemption and node answers, each checked by simulate:
# - a high-priority Job in a ClusterQueue that does not preempt: explain
#   names the --set-preemption change and the lower-priority victims Kueue
#   would take, what priority forbids, and what to delete by hand;
#   simulate with the change admits it with exactly those victims, and
#   explain on a victim says who preempted it and under which rule;
# - a Job whose nominal quota another ClusterQueue of the cohort borrows:
#   the reclaimWithinCohort answer, checked the same way;
# - a Job Kueue admits and kube-scheduler cannot place: the --add-nodes
#   answer (on the workload and on its Pending pod); simulate with it places
#   every pod on the copies;
# - bad --set-preemption and --add-nodes values exit 2 naming the flag.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
has() { grep -qxF -- "$1" "$tmp/out" || fail "missing line: $1
$(cat "$tmp/out")"; }

# ---- within a ClusterQueue ----
"$DEVPLANE" explain job/urgent -f data/preempt-within.yaml >"$tmp/out" 2>/dev/null || fail "explain urgent: exit $?"
has "What to preempt:"
has "  Kueue preempts with --set-preemption research/withinClusterQueue=LowerPriority: default/low-a (InClusterQueue, cycle 1), default/low-b (InClusterQueue, cycle 1)"
has "  Kueue preempts with --set-preemption research/withinClusterQueue=LowerOrNewerEqualPriority: default/low-a (InClusterQueue, cycle 1), default/low-b (InClusterQueue, cycle 1)"
has "  priority forbids it: withinClusterQueue takes no workload of a priority above 1000: default/high-x (5000)"
# by hand: the smallest set first (high-x alone), then the set in Kueue's order
grep -A1 -xF "  by hand, deleting or stopping: default/high-x (then it is admitted)" "$tmp/out" |
        grep -qxF "  by hand, deleting or stopping: default/low-a, default/low-b (then it is admitted)" || fail "by hand: $(cat "$tmp/out")"

# the answer checked: simulate with it admits urgent with exactly those victims
"$DEVPLANE" simulate -f data/preempt-within.yaml --set-preemption research/withinClusterQueue=LowerPriority -o json \
        >"$tmp/json" 2>/dev/null || fail "simulate --set-preemption: exit $?"
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
w = {x["name"]: x for x in d["queues"]["clusterQueues"][0]["workloads"]}
u = w["default/urgent"]
assert u["state"] == "Admitted" and u["placedPods"] == 1, u
assert u["preemptedWorkloads"] == ["default/low-a (InClusterQueue, cycle 1)", "default/low-b (InClusterQueue, cycle 1)"], u
assert sorted(n for n, x in w.items() if "preempted" in x) == ["default/low-a", "default/low-b"], w
assert w["default/high-x"]["state"] == "Admitted", w
PY
# without the change nothing is preempted: urgent waits
"$DEVPLANE" simulate -f data/preempt-within.yaml -o json 2>/dev/null | python3 -c '
import json, sys
w = {x["name"]: x for x in json.load(sys.stdin)["asWritten"]["queues"]["clusterQueues"][0]["workloads"]}
assert w["default/urgent"]["state"] == "Pending" and not any("preempted" in x for x in w.values()), w' || fail "baseline"

# the preemptor names its victims
"$DEVPLANE" explain job/urgent -f data/preempt-within.yaml --set-preemption research/withinClusterQueue=LowerPriority \
        >"$tmp/out" 2>/dev/null || fail "explain urgent admitted: exit $?"
has "It preempted: default/low-a (InClusterQueue, cycle 1), default/low-b (InClusterQueue, cycle 1)"
# why it was preempted: the preemptor, the reason, the rule
"$DEVPLANE" explain workload/low-a -f data/preempt-within.yaml --set-preemption research/withinClusterQueue=LowerPriority \
        >"$tmp/out" 2>/dev/null || fail "explain low-a: exit $?"
has "Preempted by default/urgent in cycle 1 (InClusterQueue): Preempted to accommodate a workload (UID: UNKNOWN, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /research; preemptee path: /research"
has "Why a candidate: withinClusterQueue: LowerPriority of ClusterQueue research, and its priority 10 is lower than default/urgent's 1000"
# the trials start from the input's own admissions again, those the run
# evicted included: +4 lets low-a back in (simulate agrees), or urgent gone
has "  pod set main, flavor a100: --set-quota research/a100/example.com/gpu=12 (+4)"
has "  by hand, deleting or stopping: default/urgent (then it is admitted)"
"$DEVPLANE" simulate -f data/preempt-within.yaml --set-preemption research/withinClusterQueue=LowerPriority \
        --set-quota research/a100/example.com/gpu=12 -o json 2>/dev/null | python3 -c '
import json, sys
w = {x["name"]: x for x in json.load(sys.stdin)["asWritten"]["queues"]["clusterQueues"][0]["workloads"]}
assert all(x["state"] == "Admitted" for x in w.values()), w' || fail "+4 does not admit low-a"

# ---- reclaiming in a cohort ----
"$DEVPLANE" explain job/train -f data/preempt-cohort.yaml >"$tmp/out" 2>/dev/null || fail "explain train: exit $?"
has "  Kueue preempts with --set-preemption research/reclaimWithinCohort=Any: default/second (InCohortReclamation, cycle 1)"
has "  priority forbids it: reclaimWithinCohort: LowerPriority takes no workload of a priority not below 0: default/first (500, ClusterQueue other), default/second (500, ClusterQueue other)"
has "  by hand, deleting or stopping: default/second (then it is admitted)"
grep -q "reclaimWithinCohort=LowerPriority" "$tmp/out" && fail "LowerPriority proposed: $(cat "$tmp/out")"
"$DEVPLANE" simulate -f data/preempt-cohort.yaml --set-preemption research/reclaimWithinCohort=Any -o json \
        >"$tmp/json" 2>/dev/null || fail "simulate reclaim: exit $?"
python3 - "$tmp/json" <<'PY'
import json, sys
cqs = {c["name"]: c for c in json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"]}
w = {x["name"]: x for c in cqs.values() for x in c["workloads"]}
assert w["default/train"]["state"] == "Admitted", w
assert w["default/train"]["preemptedWorkloads"] == ["default/second (InCohortReclamation, cycle 1)"], w
assert w["default/first"]["state"] == "Admitted" and "preempted" not in w["default/first"], w
PY
"$DEVPLANE" explain workload/second -f data/preempt-cohort.yaml --set-preemption research/reclaimWithinCohort=Any \
        >"$tmp/out" 2>/dev/null || fail "explain second: exit $?"
has "Why a candidate: reclaimWithinCohort: Any of ClusterQueue research: ClusterQueue other was using more than its nominal quota (borrowing in cohort pool), whatever its priority"

# ---- reclaiming while borrowing: borrowWithinCohort ----
"$DEVPLANE" explain job/train -f data/preempt-borrow.yaml >"$tmp/out" 2>/dev/null || fail "explain train (borrow): exit $?"
has "  Kueue preempts with --set-preemption research/reclaimWithinCohort=LowerPriority --set-preemption research/borrowWithinCohort.policy=LowerPriority: default/second (InCohortReclaimWhileBorrowing, cycle 1)"
grep -q "=Any" "$tmp/out" && fail "Any proposed: $(cat "$tmp/out")"
set -- --set-preemption research/reclaimWithinCohort=LowerPriority --set-preemption research/borrowWithinCohort.policy=LowerPriority
"$DEVPLANE" simulate -f data/preempt-borrow.yaml "$@" -o json 2>/dev/null | python3 -c '
import json, sys
w = {x["name"]: x for c in json.load(sys.stdin)["asWritten"]["queues"]["clusterQueues"] for x in c["workloads"]}
assert w["default/train"]["state"] == "Admitted" and w["default/train"]["borrowing"], w
assert w["default/train"]["preemptedWorkloads"] == ["default/second (InCohortReclaimWhileBorrowing, cycle 1)"], w' ||
        fail "simulate borrowWithinCohort"
"$DEVPLANE" explain workload/second -f data/preempt-borrow.yaml "$@" >"$tmp/out" 2>/dev/null || fail "explain second (borrow)"
has "Why a candidate: borrowWithinCohort: LowerPriority of ClusterQueue research (the preemptor may borrow while it reclaims), ClusterQueue other was using more than its nominal quota in cohort pool, and its priority -10 is lower than default/train's 0"
set --

# ---- by hand beyond Kueue's candidate rules: other at its nominal quota
# after the first removal is no candidate any more, yet deleting both lets
# a 6-GPU train in (no policy does) ----
sed -e 's/priority: 500/priority: -10/' -e '/name: train/,$s/example.com\/gpu: 4/example.com\/gpu: 6/' \
        data/preempt-cohort.yaml >"$tmp/wide.yaml"
"$DEVPLANE" explain job/train -f "$tmp/wide.yaml" >"$tmp/out" 2>/dev/null || fail "explain wide train: exit $?"
has "  no preemption policy of ClusterQueue research lets Kueue admit it by preempting"
has "  by hand, deleting or stopping: default/second, default/first (then it is admitted)"

# ---- admitted, not placed: more nodes of its flavor ----
"$DEVPLANE" explain job/big -f data/admitted-unplaced.yaml >"$tmp/out" 2>/dev/null || fail "explain big: exit $?"
has "Pods: 1 placed, 1 Pending after admission (admitted is not placed: \`devplane explain POD\` says why kube-scheduler left them)"
has "  --add-nodes a100=1 (copies of the first node flavor a100 selects)"
"$DEVPLANE" explain big-1 -f data/admitted-unplaced.yaml >"$tmp/out" 2>/dev/null || fail "explain big-1: exit $?"
has "0/1 nodes are available: 1 Insufficient example.com/gpu."
has "  --add-nodes a100=1 (copies of the first node flavor a100 selects)"
"$DEVPLANE" simulate -f data/admitted-unplaced.yaml --add-nodes a100=1 -o json >"$tmp/json" 2>/dev/null || fail "simulate --add-nodes: exit $?"
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
pods = {p["name"]: p for p in d["pods"]}
assert {pods["default/big-0"]["node"], pods["default/big-1"]["node"]} == {"gpu-a", "a100-whatif-0"}, pods
# the copy keeps gpu-a's taint: the pod without a toleration stays off it
assert pods["default/stray"]["state"] == "Pending" and "untolerated taint" in pods["default/stray"]["reason"], pods
w = d["queues"]["clusterQueues"][0]["workloads"][0]
assert w["placedPods"] == 2 and w["unplacedPods"] == 0, w
PY

# ---- bad values: exit 2 with the flag named ----
bad() {
        local file=$1 flag=$2 value=$3 want=$4
        set +e
        "$DEVPLANE" simulate -f "data/$file" "$flag" "$value" >/dev/null 2>"$tmp/err"
        local rc=$?
        set -e
        [ $rc -eq 2 ] || fail "$flag $value: exit $rc"
        grep -qF -- "$want" "$tmp/err" || fail "$flag $value: $(cat "$tmp/err")"
}
bad preempt-within.yaml --set-preemption research/withinClusterQueue=Any \
        "--set-preemption research/withinClusterQueue=Any: withinClusterQueue must be Never, LowerPriority or LowerOrNewerEqualPriority"
bad preempt-within.yaml --set-preemption research/colour=Any "--set-preemption research/colour=Any: FIELD must be withinClusterQueue"
bad preempt-within.yaml --set-preemption research=Any "--set-preemption research=Any: must be CLUSTERQUEUE/FIELD=VALUE"
bad preempt-within.yaml --set-preemption research/borrowWithinCohort.maxPriorityThreshold=high \
        "borrowWithinCohort.maxPriorityThreshold must be an integer"
bad preempt-within.yaml --set-preemption nope/withinClusterQueue=LowerPriority \
        "--set-preemption nope/withinClusterQueue=LowerPriority: ClusterQueue nope is not in the input"
bad preempt-within.yaml --set-preemption research/borrowWithinCohort.policy=LowerPriority \
        "borrowWithinCohort.policy other than Never needs reclaimWithinCohort other than Never"
bad admitted-unplaced.yaml --add-nodes t4=1 "--add-nodes t4=1: no Node object in the input has ResourceFlavor t4's nodeLabels (gpu=t4)"
bad admitted-unplaced.yaml --add-nodes h100=1 "--add-nodes h100=1: ResourceFlavor h100 is not in the input"
bad admitted-unplaced.yaml --add-nodes a100=0 "--add-nodes a100=0: must be FLAVOR=N"
bad admitted-unplaced.yaml --add-nodes a100 "--add-nodes a100: must be FLAVOR=N"
echo PASS
