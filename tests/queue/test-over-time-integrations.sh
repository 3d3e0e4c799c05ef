#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's quota over time for the job integrations: a workload waiting for
# quota that a Timeline delete frees at t=30s is admitted then and its pods
# start exactly as they would have at t=0 (data/over-time-integrations: the
# same pod names, the same flavors per pod set, placed by kube-scheduler on
# the same nodes). Suspend-based kinds (PyTorchJob, MPIJob, RayJob, JobSet's
# Jobs) are created at t=30s; pod-based ones (LeaderWorkerSet, StatefulSet,
# Deployment, a plain Pod) exist gated from t=0 and are ungated at t=30s.
# The first pod set of each (1 CPU) gets flavor small, the others big: a pod
# given the wrong pod set's flavors lands on the wrong node. A workload that
# never fits keeps its pods held (NotCreated) or gated; a Job partially
# admitted later runs the parallelism admitted, as at t=0; explain on a held
# pod answers for its workload.
set -euo pipefail
: "${DEVPLANE:?}"
d=data/over-time-integrations
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# kind file | how its pods wait (held: not created; gated)
while IFS='|' read -r kind wait; do
        [ -n "$kind" ] || continue
        "$DEVPLANE" simulate -f $d/base.yaml -f $d/$kind.yaml -o json >"$tmp/t0.json" 2>"$tmp/err" ||
                fail "$kind at t=0: exit $?: $(cat "$tmp/err")"
        "$DEVPLANE" simulate -f $d/base.yaml -f $d/first.yaml -f $d/$kind.yaml -o json >"$tmp/later.json" \
                2>"$tmp/err" || fail "$kind later: exit $?: $(cat "$tmp/err")"
        [ ! -s "$tmp/err" ] || fail "$kind: warnings: $(cat "$tmp/err")"
        python3 - "$tmp/t0.json" "$tmp/later.json" "$kind" "$wait" <<'PY' || fail "$kind"
import json, sys
t0, later = (json.load(open(f))["asWritten"] for f in sys.argv[1:3])
kind, wait = sys.argv[3], sys.argv[4]
def wls(d):
    return {w["name"]: w for cq in d["queues"]["clusterQueues"] for w in cq["workloads"] if w["name"] != "default/first"}
w0, w1 = wls(t0), wls(later)
assert w0 and w0.keys() == w1.keys(), (kind, w0.keys(), w1.keys())
for n, w in w1.items():
    assert w0[n]["state"] == "Admitted" and w["state"] == "Admitted", (kind, w0[n], w)
    assert w["flavors"] == w0[n]["flavors"] and w["podSets"] == w0[n]["podSets"], (kind, w0[n], w)
    assert w["placedPods"] == w0[n]["placedPods"] == sum(p["count"] for p in w["podSets"]), (kind, w)
    assert w["unplacedPods"] == 0, (kind, w)
# the same pods on the same nodes as at t=0; some on each flavor's node
p0 = {p["name"]: p for p in t0["pods"]}
p1 = {p["name"]: p for p in later["pods"] if p["name"] != "default/first-0"}
assert p0.keys() == p1.keys(), (kind, sorted(p0), sorted(p1))
assert {p["node"] for p in p1.values()} == {"n-small", "n-big"} or kind in ("statefulset", "deployment", "pod"), (kind, p1)
ev = later["events"]
i = ev.index("t=30s Kueue: default/first finished, its quota in ClusterQueue research released")
for n, p in p1.items():
    assert p["state"] == "Running" and p["node"] == p0[n]["node"], (kind, p0[n], p)
    assert p["startedAt"] == 30, (kind, p)
    assert p["createdAt"] == (30 if wait == "held" else 0), (kind, p)
    assert f"t=30s {n} bound to {p['node']}" in ev[i:], (kind, n, ev)
    ungated = f"t=30s {n} ungated (Kueue admitted its workload)"
    assert (ungated in ev[i:]) == (wait == "gated"), (kind, n, ev)
    assert (f"t=0s {n} created" in ev[:i]) == (wait == "gated"), (kind, n, ev)
for n in w1:
    assert f"t=30s Kueue: {n} admitted in ClusterQueue research" in ev[i:], (kind, n, ev)
PY
done <<'CASES'
pytorchjob|held
mpijob|held
rayjob|held
jobset|held
leaderworkerset|gated
statefulset|gated
deployment|gated
pod|gated
CASES

# never admitted (the workers ask for 2 x 5 CPUs, big holds 8): the
# PyTorchJob's pods stay held, never created; the LeaderWorkerSet's gated
sed 's/cpu: "2"/cpu: "5"/' $d/pytorchjob.yaml >"$tmp/pt.yaml"
sed 's/cpu: "2"/cpu: "5"/' $d/leaderworkerset.yaml >"$tmp/lws.yaml"
"$DEVPLANE" simulate -f $d/base.yaml -f $d/first.yaml -f "$tmp/pt.yaml" -f "$tmp/lws.yaml" -o json \
        >"$tmp/json" 2>"$tmp/err" || fail "never: exit $?: $(cat "$tmp/err")"
python3 - "$tmp/json" <<'PY' || fail "never admitted"
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
w = {x["name"]: x for x in d["queues"]["clusterQueues"][0]["workloads"]}
assert w["default/pt"]["state"] == "Pending" and w["default/lws-0"]["state"] == "Pending", w
p = {x["name"]: x for x in d["pods"]}
for n in ("default/pt-master-0", "default/pt-worker-0", "default/pt-worker-1"):
    assert p[n]["state"] == "NotCreated", p[n]
for n in ("default/lws-0", "default/lws-0-1", "default/lws-0-2"):
    assert p[n]["state"] == "Pending" and "node" not in p[n], p[n]
assert not [e for e in d["events"] if "ungated" in e or "bound to n-small" in e], d["events"]
PY

# explain on a held pod answers for its workload
"$DEVPLANE" explain -f $d/base.yaml -f $d/first.yaml -f "$tmp/pt.yaml" pt-worker-0 >"$tmp/out" 2>/dev/null ||
        fail "explain held pod: exit $?"
grep -q '^Held by Kueue: its controller creates it once Kueue starts its workload' "$tmp/out" || fail "held: $(cat "$tmp/out")"
grep -q '^Workload default/pt (PyTorchJob), LocalQueue team, ClusterQueue research: Pending' "$tmp/out" ||
        fail "explain held pod: $(cat "$tmp/out")"
grep -q "^Why not admitted (Kueue): couldn't assign flavors to pod set worker" "$tmp/out" || fail "why: $(cat "$tmp/out")"

# partial admission later: the Job runs the 4 pods admitted, as at t=0; the
# other two are never created and are no part of its placement
"$DEVPLANE" simulate -f $d/base.yaml -f $d/partial-job.yaml -o json >"$tmp/t0.json" 2>/dev/null || fail "partial t=0"
"$DEVPLANE" simulate -f $d/base.yaml -f $d/first.yaml -f $d/partial-job.yaml -o json >"$tmp/later.json" 2>/dev/null ||
        fail "partial later: exit $?"
python3 - "$tmp/t0.json" "$tmp/later.json" <<'PY' || fail "partial admission later"
import json, sys
t0, later = (json.load(open(f))["asWritten"] for f in sys.argv[1:3])
w0 = t0["queues"]["clusterQueues"][0]["workloads"][0]
w1 = {x["name"]: x for x in later["queues"]["clusterQueues"][0]["workloads"]}["default/sweep"]
assert w1["partialAdmission"] == w0["partialAdmission"] == ["main: 4 of 6 pods"], (w0, w1)
assert w1["placedPods"] == w0["placedPods"] == 4 and w1["unplacedPods"] == w0["unplacedPods"] == 0, (w0, w1)
p0 = {p["name"]: p["node"] for p in t0["pods"]}
p1 = {p["name"]: p for p in later["pods"]}
assert sorted(p0) == ["default/sweep-%d" % i for i in range(4)], p0
for n, node in p0.items():
    assert p1[n]["state"] == "Running" and p1[n]["node"] == node and p1[n]["createdAt"] == 30, p1[n]
assert p1["default/sweep-4"]["state"] == p1["default/sweep-5"]["state"] == "NotCreated", p1
PY

# -o json is the same bytes run after run
"$DEVPLANE" simulate -f $d/base.yaml -f $d/first.yaml -f $d/rayjob.yaml -f $d/leaderworkerset.yaml -o json \
        >"$tmp/a.json" 2>/dev/null || fail "twice: exit $?"
"$DEVPLANE" simulate -f $d/base.yaml -f $d/first.yaml -f $d/rayjob.yaml -f $d/leaderworkerset.yaml -o json \
        >"$tmp/b.json" 2>/dev/null || fail "twice: exit $?"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "-o json differs between two runs"
echo PASS
