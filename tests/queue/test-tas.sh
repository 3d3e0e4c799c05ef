#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's Topology-Aware Scheduling examples (examples/tas: the queues, the
# required, preferred and unconstrained Jobs; the GPU queues) on
# data/tas-nodes.yaml, the examples' kind cluster as Node objects (two
# blocks of two racks of two nodes, 8 cpu each): each Job is admitted with a
# topology assignment, the required Job's pods all land on the nodes of one
# rack, the unconstrained Job's on the least free node that holds them, and
# kube-scheduler places every pod on the node its assignment names. A Job
# that fits no rack stays pending with Kueue's message; a bad Topology exits
# 2 naming the field. The TAS-required JobSet example lands in one rack.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SHARED_DIR:?}"
ex="$DP_SHARED_DIR/conformance/kueue/site/static/examples"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$ex/tas/sample-queues.yaml" ] || { echo "SKIP: no Kueue examples in $ex"; exit 0; }

"$DEVPLANE" simulate -f data/tas-nodes.yaml -f "$ex/tas/sample-queues.yaml" -f "$ex/tas/sample-job-required.yaml" \
        -f "$ex/tas/sample-job-preferred.yaml" -f "$ex/tas/sample-job-unconstrained.yaml" -o json >"$tmp/json" ||
        fail "simulate: exit $?"
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
cq = d["queues"]["clusterQueues"][0]
byprefix = lambda p: [x for x in cq["workloads"] if x["name"].startswith("default/tas-sample-" + p)][0]
pods = {p["name"]: p for p in d["pods"]}
def placed(wl):
    ps = [p for n, p in pods.items() if n.startswith(wl["name"] + "-")]
    assert ps and all(p["state"] == "Running" for p in ps), ps
    return ps
for kind in ("required", "preferred", "unconstrained"):
    wl = byprefix(kind)
    assert wl["state"] == "Admitted", wl
    ta = wl["topologyAssignment"]
    assert ta["levels"] == ["kubernetes.io/hostname"], ta
    want = {dom["values"][0]: dom["count"] for dom in ta["domains"]}
    got = {}
    for p in placed(wl):
        got[p["node"]] = got.get(p["node"], 0) + 1
    assert got == want, (kind, got, want)   # every pod on the node its domain names
req = byprefix("required")
racks = {"-".join(p["node"].split("-")[1:3]) for p in placed(req)}
assert len(racks) == 1 and len(placed(req)) == 10, racks   # required rack: one rack
pref = byprefix("preferred")
assert sum(x["count"] for x in pref["topologyAssignment"]["domains"]) == 40, pref
unc = byprefix("unconstrained")
assert len(unc["topologyAssignment"]["domains"]) == 1, unc   # LeastFreeCapacity: the node left with 6
assert unc["topologyAssignment"]["domains"][0]["count"] == 6, unc
PY

# the text says where each went
"$DEVPLANE" simulate -f data/tas-nodes.yaml -f "$ex/tas/sample-queues.yaml" -f "$ex/tas/sample-job-required.yaml" \
        >"$tmp/text" || fail "simulate text: exit $?"
grep -q 'topology (kubernetes.io/hostname): tas-b1-r1-a=8, tas-b1-r1-b=2' "$tmp/text" || fail "text: $(cat "$tmp/text")"

# the GPU queues: the flavor's toleration rides along; a rack holds 16 cpu, so 20 pods of the
# required Job's shape fit no rack and the Job waits with Kueue's message
sed 's/parallelism: 10/parallelism: 20/; s/completions: 10/completions: 20/' "$ex/tas/sample-job-required.yaml" >"$tmp/big.yaml"
"$DEVPLANE" simulate -f data/tas-nodes.yaml -f "$ex/tas/sample-gpu-queues.yaml" -f "$tmp/big.yaml" -o json >"$tmp/json" ||
        fail "simulate gpu queues: exit $?"
python3 - "$tmp/json" <<'PY'
import json, sys
cq = json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"][0]
wl = cq["workloads"][0]
assert wl["state"] == "Pending", wl
assert wl["message"] == ('couldn\'t assign flavors to pod set main: topology "default" allows to fit '
                         'only 16 out of 20 pod(s)'), wl["message"]
PY

# a bad Topology: exit 2 naming the object and the field
printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\nspec:\n  levels:\n  - nodeLabel: kubernetes.io/hostname\n  - nodeLabel: rack\n' >"$tmp/bad.yaml"
set +e
"$DEVPLANE" simulate -f data/tas-nodes.yaml -f "$tmp/bad.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
[ $rc = 2 ] || fail "bad Topology: exit $rc"
grep -q 'Topology t: spec.levels\[0\]: nodeLabel: the kubernetes.io/hostname label can only be used at the lowest level' "$tmp/err" ||
        fail "bad Topology: $(cat "$tmp/err")"

# the JobSet examples, on the queues with the LocalQueue they name
printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {namespace: default, name: user-queue}\nspec: {clusterQueue: tas-cluster-queue}\n' >"$tmp/lq.yaml"
"$DEVPLANE" simulate -f data/tas-nodes.yaml -f "$ex/tas/sample-queues.yaml" -f "$tmp/lq.yaml" \
        -f "$ex/jobs/sample-jobset-tas-required.yaml" -o json >"$tmp/json" 2>"$tmp/err" || fail "jobset: exit $?"
grep -q '"kind": "JobSet"' "$tmp/json" || fail "the JobSet is not a workload: $(head -c 2000 "$tmp/json")"
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
wl = [x for x in d["queues"]["clusterQueues"][0]["workloads"] if x["kind"] == "JobSet"][0]
assert wl["state"] == "Admitted" and "topologyAssignment" in wl, wl
nodes = {p["node"] for p in d["pods"] if p["name"].startswith("default/jobset-tas-required")}
assert len({"-".join(n.split("-")[1:3]) for n in nodes}) == 1, nodes   # one rack
PY
echo ok
