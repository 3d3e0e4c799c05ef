#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# devplane simulate --queue-policy volcano: Volcano's admission decides which
# pods of schedulerName volcano kube-scheduler places (data/volcano.yaml: two
# queues on two 4-GPU nodes); the others stay Pending with Volcano's words;
# -o json shows each queue's deserved/allocated/share/state and each
# PodGroup's phase and reason; the capacity plugin; bad input exits 2.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# without the policy the pods are not the default scheduler's: all Pending
"$DEVPLANE" simulate -f data/volcano.yaml >"$tmp/out" 2>"$tmp/err" || fail "simulate exited $?"
# and a warning says the Queues are read but not used without the policy
grep -q 'warning: 2 Volcano Queue(s) in the input: Volcano.s admission runs only with --queue-policy volcano' "$tmp/err" ||
        fail "no warning about the unused Queues: $(cat "$tmp/err")"
grep -Eq '^default/train-0 +Pending .*not scheduled by default-scheduler: spec.schedulerName volcano' "$tmp/out" ||
        fail "train-0 without the policy: $(cat "$tmp/out")"
! grep -q 'Volcano admission' "$tmp/out" || fail "Volcano ran without --queue-policy volcano"

"$DEVPLANE" simulate -f data/volcano.yaml --queue-policy volcano >"$tmp/out" 2>"$tmp/err" || fail "simulate exited $?"
grep -Eq '^default/train-0 +Running +gpu-' "$tmp/out" || fail "train-0 not placed: $(cat "$tmp/out")"
grep -Eq '^default/train-1 +Running +gpu-' "$tmp/out" || fail "train-1 not placed"
grep -Eq '^default/lone +Running ' "$tmp/out" || fail "the one-pod group of lone not placed"
grep -Eq '^default/web +Running ' "$tmp/out" || fail "the default scheduler's pod"
grep -Eq '^default/gang3-0 +Pending .*Volcano: PodGroup default/gang3 Inqueue: 3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable' "$tmp/out" ||
        fail "gang3's reason: $(grep gang3-0 "$tmp/out")"
grep -Eq '^default/eval-0 +Pending .*Volcano: PodGroup default/eval Pending: queue resource quota insufficient' "$tmp/out" ||
        fail "eval's reason"
grep -q '^Volcano admission (proportion plugin, 2 sessions; cluster cpu=16,memory=64Gi,nvidia.com/gpu=8)' "$tmp/out" || fail "header"
grep -q '^Queue team-a (Open, weight 1, traverse): 1 running, 1 inqueue, 0 pending; deserved cpu=5,memory=5Gi,nvidia.com/gpu=6 allocated cpu=2,memory=2Gi,nvidia.com/gpu=4 share 0.6667' "$tmp/out" ||
        fail "team-a: $(grep 'Queue team-a' "$tmp/out")"
grep -q 'Queue team-b: spec: unknown field "colour" (line [0-9]*): not a field devplane reads, ignored' "$tmp/err" ||
        fail "no warning: $(cat "$tmp/err")"

"$DEVPLANE" simulate -f data/volcano.yaml --queue-policy volcano -o json >"$tmp/json" 2>/dev/null
python3 - "$tmp/json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["asWritten"]["volcano"]
assert v["plugin"] == "proportion", v
q = {x["name"]: x for x in v["queues"]}
assert set(q) == {"team-a", "team-b"}, q
assert q["team-b"]["deserved"]["nvidia.com/gpu"] == "2" and q["team-b"]["realCapability"]["nvidia.com/gpu"] == "2", q
assert q["team-a"]["state"] == "Open" and q["team-a"]["share"] > 0.66 and not q["team-a"]["overused"], q
g = {x["name"]: x for x in v["podGroups"]}
assert g["default/train"]["phase"] == "Running" and g["default/train"]["session"] == 1, g
assert g["default/gang3"]["phase"] == "Inqueue" and g["default/gang3"]["reason"] == "NotEnoughResources", g
assert g["default/eval"]["phase"] == "Pending" and g["default/eval"]["message"] == "queue resource quota insufficient", g
assert g["default/podgroup-lone"]["implicit"] is True and g["default/podgroup-lone"]["queue"] == "team-b", g
PY

# capacity: deserved as written; team-a at its 4 GPUs is overused, gang3 is not tried
"$DEVPLANE" simulate -f data/volcano.yaml --queue-policy volcano --volcano-plugin capacity >"$tmp/out" 2>/dev/null ||
        fail "capacity: exit $?"
grep -q '^Volcano admission (capacity plugin' "$tmp/out" || fail "capacity header"
grep -q 'note: queue team-a is overused (deserved <= allocated)' "$tmp/out" || fail "capacity: $(cat "$tmp/out")"
grep -Eq '^default/train-0 +Running ' "$tmp/out" || fail "capacity: train-0"

# reclaim (opt-in): q1 holds the node above its deserved; q2's job takes 2 cpu back
"$DEVPLANE" simulate -f volcano/case-reclaim.yaml --queue-policy volcano --volcano-actions enqueue,allocate,backfill,reclaim \
        >"$tmp/out" 2>/dev/null || fail "reclaim: exit $?"
grep -Eq '^ns1/a-3 +Evicted .*Volcano reclaim: evicted for PodGroup ns1/b of queue q2 \(queue q1 above its deserved\)' "$tmp/out" ||
        fail "reclaim: $(cat "$tmp/out")"
grep -Eq '^ns1/b-0 +Running +n1 ' "$tmp/out" || fail "reclaim: b-0 not placed"
grep -Eq '^ns1/a-1 +Running +n1 ' "$tmp/out" || fail "reclaim: a-1 evicted"
"$DEVPLANE" simulate -f volcano/case-reclaim.yaml --queue-policy volcano >"$tmp/out" 2>/dev/null || fail "no reclaim: exit $?"
grep -Eq '^ns1/b-0 +Pending .*Volcano: PodGroup ns1/b Inqueue' "$tmp/out" || fail "without reclaim: $(cat "$tmp/out")"
# preempt (opt-in): within queue q1 the high-priority task takes the place of
# two low-priority pods, the one annotated volcano.sh/preemptable false stays
"$DEVPLANE" simulate -f volcano/case-preempt-large-task.yaml --queue-policy volcano \
        --volcano-actions enqueue,allocate,preempt,backfill >"$tmp/out" 2>/dev/null || fail "preempt: exit $?"
grep -Eq '^c1/preemptee2 +Evicted .*Volcano preempt: evicted for PodGroup c1/pg2 of queue q1 \(priority 100000 over PodGroup c1/pg1.s 10\)' \
        "$tmp/out" || fail "preempt: $(cat "$tmp/out")"
grep -Eq '^c1/preemptor1 +Running +n1 ' "$tmp/out" || fail "preempt: preemptor1 not placed"
grep -Eq '^c1/preemptee3 +Running +n1 ' "$tmp/out" || fail "preempt: preemptee3 evicted"
"$DEVPLANE" simulate -f volcano/case-preempt-large-task.yaml --queue-policy volcano >"$tmp/out" 2>/dev/null || fail "no preempt: exit $?"
grep -Eq '^c1/preemptor1 +Pending .*Volcano: PodGroup c1/pg2 Inqueue' "$tmp/out" || fail "without preempt: $(cat "$tmp/out")"
# the capacity plugin's DRA quota: q1 may hold 2 devices of gpu.example.com
"$DEVPLANE" simulate -f volcano/case-capacity-dra-quota.yaml --queue-policy volcano --volcano-plugin capacity \
        >"$tmp/out" 2>/dev/null || fail "dra quota: exit $?"
grep -Eq '^ns1/b-0 +Pending .*Volcano: PodGroup ns1/b Pending: queue resource quota insufficient' "$tmp/out" ||
        fail "dra quota: $(cat "$tmp/out")"
grep -q '    DRA quota (allocated/capability, 0: none) deviceclass/gpu.example.com=2/2' "$tmp/out" || fail "dra line"
"$DEVPLANE" simulate -f volcano/case-capacity-dra-quota.yaml --queue-policy volcano >"$tmp/out" 2>/dev/null ||
        fail "dra proportion: exit $?"
grep -q "    note: deviceclass/gpu.example.com: DRA quota is the capacity plugin's: proportion counts no claim" "$tmp/out" ||
        fail "dra proportion note: $(cat "$tmp/out")"

# bad values: one error with the path, exit 2
sed 's/^  weight: 1$/  weight: 0/' data/volcano.yaml >"$tmp/bad.yaml"
set +e
"$DEVPLANE" simulate -f "$tmp/bad.yaml" --queue-policy volcano >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "weight 0: exit $rc"
grep -q 'Queue team-a: spec.weight: queue weight must be a positive integer' "$tmp/err" || fail "weight 0: $(cat "$tmp/err")"
sed 's/^  weight: 1$/  weight: 1\n  dequeueStrategy: lifo/' data/volcano.yaml >"$tmp/bad.yaml"
set +e
"$DEVPLANE" simulate -f "$tmp/bad.yaml" >/dev/null 2>"$tmp/err"
rc=$?
"$DEVPLANE" simulate -f data/volcano.yaml --queue-policy yunikorn >/dev/null 2>"$tmp/err2"
rc2=$?
"$DEVPLANE" simulate -f data/volcano.yaml --queue-policy volcano --volcano-actions enqueue,allocate,shuffle >/dev/null 2>"$tmp/err3"
rc3=$?
set -e
[ "$rc3" = 2 ] || fail "--volcano-actions shuffle: exit $rc3"
grep -q 'action "shuffle" is not simulated' "$tmp/err3" || fail "shuffle: $(cat "$tmp/err3")"
[ "$rc" = 2 ] || fail "dequeueStrategy lifo: exit $rc"
grep -q 'spec.dequeueStrategy: unsupported value "lifo": supported values: fifo, traverse' "$tmp/err" || fail "lifo: $(cat "$tmp/err")"
[ "$rc2" = 2 ] || fail "--queue-policy yunikorn: exit $rc2"
echo "ok"
