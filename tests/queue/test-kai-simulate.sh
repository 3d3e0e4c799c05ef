#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `devplane simulate --queue-policy kai`: KAI-Scheduler's quickstart (its default
# queues and example pods, read from DP_SHARED_DIR at test time) on two GPU nodes:
# the fair share per queue and resource, the pods admitted and placed by the
# kube-scheduler engine; without the flag the same with a warning naming the
# policy; --queue-policy kueue leaves the pods to kai-scheduler (Pending); a
# queue limit and a non-preemptible pod over quota keep pods Pending with KAI's
# reasons (data/limited.yaml); bad Queue values and a bad policy exit 2.
set -euo pipefail
: "${DEVPLANE:?}"
qs="${DP_SHARED_DIR:-}/conformance/kai-scheduler/examples/quickstart"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$qs/default-queues.yaml" ] || { echo "SKIP: no KAI-Scheduler examples in $qs"; exit 0; }

"$DEVPLANE" simulate -f "$qs/default-queues.yaml" -f "$qs/pods" -f kai/data/gpu-nodes.yaml --queue-policy kai \
        -o json >"$tmp/kai.json" 2>"$tmp/kai.err" || fail "simulate: exit $?: $(cat "$tmp/kai.err")"
python3 - "$tmp/kai.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["asWritten"]
k = run["kaiQueues"]
assert k["policy"] == "kai" and k["capacity"] == {"cpu": 16000, "memory": 68719.47674, "gpu": 4}, k["capacity"]
q = {x["name"]: x for x in k["queues"]}
leaf = q["default-queue"]
assert leaf["parent"] == "default-parent-queue", leaf
# quota 0, limit -1, weight 1: the fair share is what is requested (100m + 250M, one GPU)
assert leaf["deserved"] == {"cpu": 0, "memory": 0, "gpu": 0}, leaf
assert leaf["fairShare"] == {"cpu": 100, "memory": 250, "gpu": 1}, leaf
assert leaf["allocated"] == {"cpu": 100, "memory": 250, "gpu": 1}, leaf
assert q["default-parent-queue"]["fairShare"] == leaf["fairShare"], q
g = {x["name"]: x for x in k["groups"]}
assert g["default/gpu-pod"]["admitted"] and g["default/cpu-only-pod"]["admitted"], g
pods = {p["name"]: p for p in run["pods"]}
assert pods["default/gpu-pod"]["state"] == "Running" and pods["default/cpu-only-pod"]["state"] == "Running", pods
PY

# no flag: KAI's Queues and no Kueue object choose KAI's policy, and a warning says so
"$DEVPLANE" simulate -f "$qs/default-queues.yaml" -f "$qs/pods" -f kai/data/gpu-nodes.yaml >"$tmp/auto.txt" \
        2>"$tmp/auto.err" || fail "simulate without the flag: exit $?"
grep -q "warning: 2 KAI-Scheduler Queue(s) in the input: KAI-Scheduler's fair share admits the pods of kai-scheduler" \
        "$tmp/auto.err" || fail "no policy warning: $(cat "$tmp/auto.err")"
grep -q "Queue default-queue in default-parent-queue: deserved cpu=0 memory=0 gpu=0 fairShare cpu=100 memory=250 gpu=1" \
        "$tmp/auto.txt" || fail "text: $(cat "$tmp/auto.txt")"
grep -q "default/gpu-pod .* Running" "$tmp/auto.txt" || fail "gpu-pod: $(cat "$tmp/auto.txt")"

# --queue-policy kueue: nobody admits kai-scheduler's pods
"$DEVPLANE" simulate -f "$qs/default-queues.yaml" -f "$qs/pods" -f kai/data/gpu-nodes.yaml --queue-policy kueue \
        -o json >"$tmp/kueue.json" 2>/dev/null
python3 - "$tmp/kueue.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["asWritten"]
assert "kaiQueues" not in run, run.keys()
for p in run["pods"]:
    assert p["state"] == "Pending" and "spec.schedulerName kai-scheduler" in p["reason"], p
PY

# a limit and a non-preemptible pod over quota: Pending with KAI's reasons
"$DEVPLANE" simulate -f kai/data/limited.yaml -f kai/data/gpu-nodes.yaml --queue-policy kai -o json \
        >"$tmp/lim.json" 2>"$tmp/lim.err" || fail "limited: exit $?: $(cat "$tmp/lim.err")"
python3 - "$tmp/lim.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["asWritten"]
g = {x["name"]: x for x in run["kaiQueues"]["groups"]}
assert g["default/train-0"]["admitted"] and g["default/train-1"]["admitted"], g
t2 = g["default/train-2"]
assert not t2["admitted"] and t2["reason"] == "OverLimit", t2
assert t2["message"] == ("team-a quota has reached the allowable limit of GPUs. Limit is 2 GPUs, currently 2 GPUs "
                         "allocated and workload requested 1 GPUs"), t2
b = g["default/build"]
assert not b["admitted"] and not b["preemptible"] and b["reason"] in ("NonPreemptibleOverQuota", "OverLimit"), b
q = {x["name"]: x for x in run["kaiQueues"]["queues"]}
assert q["team-a"]["fairShare"]["gpu"] == 2 and q["team-a"]["limit"]["gpu"] == 2, q["team-a"]
pods = {p["name"]: p["state"] for p in run["pods"]}
assert pods == {"default/train-0": "Running", "default/train-1": "Running", "default/train-2": "Pending",
                "default/build-0": "Pending"}, pods
why = {p["name"]: p.get("reason", "") for p in run["pods"]}
assert why["default/train-2"] == "KAI-Scheduler OverLimit: " + t2["message"], why
PY

# KAI's podgrouper for a batch/v1 Job (KAI's examples/batch/batch-job-min-member.yaml: parallelism 6,
# kai.scheduler/batch-min-member 2, one GPU a pod): one group for the Job, its pods elastic above minMember,
# 4 of 6 started on the 4 GPUs; with minMember 6 the gang does not fit and none starts
bj="${DP_SHARED_DIR:-}/conformance/kai-scheduler/examples/batch/batch-job-min-member.yaml"
for mm in 2 6; do
        sed "s|batch-min-member: \"2\"|batch-min-member: \"$mm\"|" "$bj" >"$tmp/job-$mm.yaml"
        "$DEVPLANE" simulate -f "$qs/default-queues.yaml" -f "$tmp/job-$mm.yaml" -f kai/data/gpu-nodes.yaml \
                --queue-policy kai -o json >"$tmp/job-$mm.json" 2>"$tmp/job.err" || fail "job: exit $?: $(cat "$tmp/job.err")"
        python3 - "$tmp/job-$mm.json" "$mm" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["asWritten"]
mm = int(sys.argv[2])
g = run["kaiQueues"]["groups"]
assert len(g) == 1, g
g = g[0]
assert g["name"] == "default/batch-job-min-member" and g["kind"] == "Job" and g["minMember"] == mm, g
assert g["pods"] == 6 and g["startedPods"] == (4 if mm == 2 else 0), g
running = sum(p["state"] == "Running" for p in run["pods"])
assert running == (4 if mm == 2 else 0), run["pods"]
if mm == 6:
    assert g["reason"] == "Unschedulable" and "6 pod(s) of the gang must start together" in g["message"], g
PY
done
# kai.scheduler/skip-podgrouper "true": no group for the Job; its pods, naming no PodGroup, are started by nobody
sed 's|kai.scheduler/batch-min-member: "2"|kai.scheduler/skip-podgrouper: "true"|' "$bj" >"$tmp/job-skip.yaml"
"$DEVPLANE" simulate -f "$qs/default-queues.yaml" -f "$tmp/job-skip.yaml" -f kai/data/gpu-nodes.yaml --queue-policy kai \
        -o json >"$tmp/job-skip.json" 2>"$tmp/job.err" || fail "skip-podgrouper: exit $?: $(cat "$tmp/job.err")"
python3 - "$tmp/job-skip.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["asWritten"]
assert run["kaiQueues"]["groups"] == [], run["kaiQueues"]["groups"]
assert all(p["state"] == "Pending" for p in run["pods"]) and len(run["pods"]) == 6, run["pods"]
PY
sed 's|batch-min-member: "2"|batch-min-member: "two"|' "$bj" >"$tmp/job-bad.yaml"
if "$DEVPLANE" simulate -f "$qs/default-queues.yaml" -f "$tmp/job-bad.yaml" -f kai/data/gpu-nodes.yaml \
        >/dev/null 2>"$tmp/job-bad.err"; then
        fail "a batch-min-member of \"two\" was accepted"
else
        [ $? = 2 ] || fail "bad batch-min-member: exit not 2"
fi
grep -q 'Job default/batch-job-min-member: metadata.annotations\[kai.scheduler/batch-min-member\]: "two": must be a positive integer' \
        "$tmp/job-bad.err" || fail "bad batch-min-member: $(cat "$tmp/job-bad.err")"

# bad values: exit 2 with the field path; an unknown field is a warning
sed 's/quota: 1, limit: 2/quota: -3, limit: 2/' kai/data/limited.yaml >"$tmp/bad.yaml"
if "$DEVPLANE" simulate -f "$tmp/bad.yaml" -f kai/data/gpu-nodes.yaml >/dev/null 2>"$tmp/bad.err"; then
        fail "a quota of -3 was accepted"
else
        [ $? = 2 ] || fail "bad quota: exit not 2"
fi
grep -q "Queue team-a: spec.resources.gpu.quota: must be -1 or more, got -3" "$tmp/bad.err" || fail "$(cat "$tmp/bad.err")"
sed 's/parentQueue: research/parentQueue: research\n  colour: blue/' kai/data/limited.yaml >"$tmp/unknown.yaml"
"$DEVPLANE" simulate -f "$tmp/unknown.yaml" -f kai/data/gpu-nodes.yaml >/dev/null 2>"$tmp/unknown.err" ||
        fail "unknown field: exit $?"
grep -q 'Queue team-a: spec: unknown field "colour".*not a field devplane reads, ignored' "$tmp/unknown.err" ||
        fail "unknown field: $(cat "$tmp/unknown.err")"
if "$DEVPLANE" simulate -f kai/data/limited.yaml --queue-policy bogus >/dev/null 2>"$tmp/pol.err"; then
        fail "--queue-policy bogus accepted"
else
        [ $? = 2 ] || fail "bad policy: exit not 2"
fi
grep -q -- "--queue-policy bogus: must be .*kai" "$tmp/pol.err" || fail "policy message: $(cat "$tmp/pol.err")"
echo PASS
