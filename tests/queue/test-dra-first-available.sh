#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A DRA prioritized list (firstAvailable) under Kueue's quota (queue/dra.c): with the
# Configuration's featureGates.KueueDRAIntegrationPrioritizedList (Kueue v0.20, alpha) a
# request is charged the largest count of its alternatives on the one quota resource they
# all map to; alternatives mapping to two resources, an unmapped or a counter-backed class,
# allocationMode All are refused with Kueue's field errors (facts: Kueue's
# pkg/dra TestChargeForPrioritizedList and TestChargesForClaimSpecWithPrioritizedList);
# without the gate, Kueue v0.19's "FirstAvailable device selection is not supported".
# Each case is a Job of its own ClusterQueue, so the ClusterQueue's usage is its charge.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 - "$tmp/in.yaml" <<'PY'
import json, sys
def alt(name, cls, count=None, mode=None):
    a = {"name": name, "deviceClassName": cls}
    if count is not None: a["count"] = count
    if mode: a["allocationMode"] = mode
    return a
fa = lambda name, *alts: {"name": name, "firstAvailable": list(alts)}
exact = lambda name, cls, count: {"name": name, "exactly": {"deviceClassName": cls, "count": count}}
cases = {
    # TestChargeForPrioritizedList
    "largest": [fa("r", alt("fast", "fast.example.com", 1), alt("slow", "slow.example.com", 3))],
    "order": [fa("r", alt("slow", "slow.example.com", 3), alt("fast", "fast.example.com", 1))],
    "equal": [fa("r", alt("fast", "fast.example.com", 2), alt("slow", "slow.example.com", 2))],
    "one-alternative": [fa("r", alt("fast", "fast.example.com", 4))],
    "unset-count": [fa("r", alt("a", "fast.example.com"), alt("slow", "slow.example.com", 5))],
    "two-resources": [fa("r", alt("fast", "fast.example.com", 1), alt("slow", "cpu.example.com", 8))],
    "unmapped": [fa("r", alt("fast", "fast.example.com", 1), alt("unknown", "unknown.example.com", 1))],
    "counter-backed": [fa("r", alt("fast", "counter.example.com", 1))],
    "mode-all": [fa("r", alt("fast", "fast.example.com", mode="All"))],
    # TestChargesForClaimSpecWithPrioritizedList
    "two-maxima": [fa("r0", alt("fast", "fast.example.com", 1), alt("slow", "slow.example.com", 3)),
                   fa("r1", alt("fast", "fast.example.com", 2), alt("slow", "slow.example.com", 5))],
    "exact-beside": [exact("r0", "fast.example.com", 2),
                     fa("r1", alt("fast", "fast.example.com", 1), alt("slow", "slow.example.com", 4))],
}
docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f"}}]
for c, reqs in cases.items():
    docs += [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq-" + c},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{
             "coveredResources": ["cpu", "example.com/gpu", "example.com/cpu"],
             "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 10},
                                                     {"name": "example.com/gpu", "nominalQuota": 100},
                                                     {"name": "example.com/cpu", "nominalQuota": 100}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq-" + c, "namespace": "default"},
         "spec": {"clusterQueue": "cq-" + c}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t-" + c, "namespace": "default"},
         "spec": {"spec": {"devices": {"requests": reqs}}}},
        {"apiVersion": "batch/v1", "kind": "Job",
         "metadata": {"name": c, "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "lq-" + c}},
         "spec": {"parallelism": 1, "template": {"spec": {
             "restartPolicy": "Never",
             "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t-" + c}],
             "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]}}]}}}},
    ]
with open(sys.argv[1], "w") as f:
    f.write("\n---\n".join(json.dumps(d) for d in docs) + "\n")
PY
config() { # GATE(true|false)
        cat <<EOF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
featureGates: {KueueDRAIntegrationPrioritizedList: $1}
resources:
  deviceClassMappings:
  - {name: example.com/gpu, deviceClassNames: [fast.example.com, slow.example.com]}
  - {name: example.com/cpu, deviceClassNames: [cpu.example.com]}
  - name: example.com/gpu-memory
    deviceClassNames: [counter.example.com]
    sources:
    - counter: {name: memory, driver: counter.example.com, deviceSelector: {cel: {expression: "true"}}}
EOF
}
config true >"$tmp/on.yaml"
config false >"$tmp/off.yaml"

"$DEVPLANE" simulate -f "$tmp/in.yaml" --kueue-config "$tmp/on.yaml" -o json >"$tmp/on.json" 2>"$tmp/on.err" ||
        fail "gate on: exit $?: $(cat "$tmp/on.err")"
python3 - "$tmp/on.json" <<'PY'
import json, sys
cqs = {c["name"][3:]: c for c in json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"]}
def charge(case):
    c = cqs[case]
    w = c["workloads"][0]
    assert w["state"] == "Admitted", (case, w)
    return {u["resource"]: u["used"] for u in c["usage"] if u["resource"] != "cpu" and u["used"] != "0"}
want = {"largest": {"example.com/gpu": "3"}, "order": {"example.com/gpu": "3"}, "equal": {"example.com/gpu": "2"},
        "one-alternative": {"example.com/gpu": "4"}, "unset-count": {"example.com/gpu": "5"},
        "two-maxima": {"example.com/gpu": "8"}, "exact-beside": {"example.com/gpu": "6"}}
for case, w in want.items():
    got = charge(case)
    assert got == w, (case, got, w)
pre = "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0].firstAvailable"
refused = {
    "two-resources": pre + '[1].deviceClassName: Invalid value: "cpu.example.com": ResourceClaimTemplate t-two-resources: '
                     'every alternative must map to "example.com/gpu", this one maps to "example.com/cpu"',
    "unmapped": pre + '[1].deviceClassName: Not found: "unknown.example.com": ResourceClaimTemplate t-unmapped: ',
    "counter-backed": pre + '[0].deviceClassName: Invalid value: "counter.example.com": ResourceClaimTemplate '
                      't-counter-backed: a counter-backed or capacity-backed DeviceClass is not supported for firstAvailable',
    "mode-all": pre + '[0].allocationMode: Unsupported value: "All": ResourceClaimTemplate t-mode-all: supported values: "ExactCount"',
}
for case, msg in refused.items():
    w = cqs[case]["workloads"][0]
    assert w["state"] == "Pending" and w["reason"] == "Inadmissible", (case, w)
    assert w["message"] == msg, (case, w["message"], msg)
PY

# the gate off (Kueue v0.19, and v0.20's default): every prioritized list refused
"$DEVPLANE" simulate -f "$tmp/in.yaml" --kueue-config "$tmp/off.yaml" -o json >"$tmp/off.json" 2>/dev/null ||
        fail "gate off: exit $?"
python3 - "$tmp/off.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"]:
    w = c["workloads"][0]
    i = 1 if c["name"] == "cq-exact-beside" else 0
    assert w["state"] == "Pending" and w["message"] == (
        "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[%d]: Invalid value: null: "
        "ResourceClaimTemplate t-%s: FirstAvailable device selection is not supported" % (i, c["name"][3:])), w
PY
echo PASS
