#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Scenario 14 at cluster level: every workload of ../shared/conformance/dra-example-driver/
# (read from DP_SHARED_DIR, never copied) through `devplane simulate` on an example-gpu node, with the placement each
# README states (which pods run, which GPUs they get, who shares).
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}" "${DP_SHARED_DIR:?}"
conf="$DP_SHARED_DIR/conformance/dra-example-driver"
here="$DP_SOURCE_DIR/tests/sched/conformance"
[ -d "$conf" ] || { echo "SKIP: no $conf"; exit 0; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check FLEET[,TIMELINE] WORKLOAD 'ns/pod=STATE:dev,dev[@deletedAt]' ...
# (the report is kept in $tmp/last.json)
check() {
        local fleet=${1%%,*} wl=$2 extra=()
        [ "$fleet" = "$1" ] || extra=(-f "$here/${1#*,}")
        shift 2
        "$DEVPLANE" simulate -f "$here/$fleet" -f "$conf/$wl" "${extra[@]}" -o json >"$tmp/last.json"
        python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
got = {p["name"]: p["state"] + ":" + ",".join(p["devices"].get("v2", [])) + ("@%d" % p["deletedAt"] if "deletedAt" in p else "")
       for p in d["asWritten"]["pods"]}
want = dict(a.split("=", 1) for a in sys.argv[3:])
bad = [f"{k}: got {got.get(k)}, want {v}" for k, v in want.items() if got.get(k) != v]
if set(got) != set(want): bad.append(f"pods {sorted(got)} != {sorted(want)}")
if bad:
    print("FAIL", sys.argv[2], *bad, sep="\n  ")
    sys.exit(1)
print("PASS", sys.argv[2])
' "$tmp/last.json" "$wl" "$@"
}
# shares: the report's claims, one line per result "pod claim request device shareID|-"
shares() {
        python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]:
    for c in p.get("claims", []):
        for r in c["results"]:
            print(p["name"], c["name"], r["request"], r["device"], r.get("shareID", "-"))
' "$tmp/last.json"
}

all=$(printf 'gpu-%d,' 0 1 2 3 4 5 6 7)
check fleet.yaml admin-access/admin-access.yaml "admin-access/pod0=Running:${all%,}"
check fleet.yaml basic-multiple-requests/basic-multiple-requests.yaml "basic-multiple-requests/pod0=Running:gpu-0,gpu-1"
check fleet.yaml basic-resourceclaim-opaque-config/basic-resourceclaim-opaque-config.yaml \
        "basic-resourceclaim-opaque-config/pod0=Running:gpu-0,gpu-1"
check fleet.yaml basic-resourceclaimtemplate/basic-resourceclaimtemplate.yaml \
        "basic-resourceclaimtemplate/pod0=Running:gpu-0" "basic-resourceclaimtemplate/pod1=Running:gpu-1"
check fleet.yaml basic-shared-claim-across-containers/basic-shared-claim-across-containers.yaml \
        "basic-shared-claim-across-containers/pod0=Running:gpu-0"
check fleet.yaml basic-shared-claim-across-pods/basic-shared-claim-across-pods.yaml \
        "basic-shared-claim-across-pods/pod0=Running:gpu-0" "basic-shared-claim-across-pods/pod1=Running:gpu-0"
check fleet.yaml binding-conditions/binding-conditions.yaml "binding-conditions/pod0=Running:gpu-0"
check fleet.yaml cel-selector/cel-selector.yaml "cel-selector/pod0=Running:gpu-0"
check fleet.yaml initcontainer-shared-gpu/initcontainer-shared-gpu.yaml "initcontainer-shared-gpu/pod0=Running:gpu-0"
check fleet.yaml prioritized-alternatives/prioritized-alternatives.yaml \
        "prioritized-alternatives/pod0=Running:gpu-0" "prioritized-alternatives/pod1=Running:gpu-1"
check fleet-extended.yaml extended-resource-request/extended-resource-request.yaml \
        "extended-resource-request/pod0=Running:gpu-0" "extended-resource-request/pod1=Running:gpu-1"
# a Deployment's replicas in a gang PodGroup share the group's claim
check fleet.yaml podgroup-resourceclaimtemplate/podgroup-resourceclaimtemplate.yaml \
        "podgroup-resourceclaimtemplate/group-1-0=Running:gpu-0" "podgroup-resourceclaimtemplate/group-1-1=Running:gpu-0" \
        "podgroup-resourceclaimtemplate/group-2-0=Running:gpu-1" "podgroup-resourceclaimtemplate/group-2-1=Running:gpu-1"
# driver options: partitions over shared counters; consumable capacity (pods share a device)
check fleet-partitions.yaml partitionable-devices/partitionable-devices.yaml \
        "partitionable-devices/pod0=Running:gpu-0-partition-0,gpu-0-partition-1"
check fleet-multiple.yaml gpu-allow-multiple-allocations/gpu-allow-multiple-allocations.yaml \
        "gpu-allow-multiple-allocations/pod0=Running:gpu-0" "gpu-allow-multiple-allocations/pod1=Running:gpu-0"
check fleet-partitions-multiple.yaml \
        gpu-allow-multiple-allocations-partitionable/gpu-allow-multiple-allocations-partitionable.yaml \
        "gpu-allow-multiple-allocations-partitionable/pod0=Running:gpu-0-partition-0" \
        "gpu-allow-multiple-allocations-partitionable/pod1=Running:gpu-0-partition-0"
# device taints: a DeviceTaintRule keeps new pods off (NoSchedule) unless tolerated
check fleet.yaml,timeline-taint-noschedule.yaml device-taints-tolerations/device-taint-pod-noschedule \
        "basic-resourceclaimtemplate/pod-keeps-running=Running:gpu-0" "basic-resourceclaimtemplate/pod-no-schedule=Pending:"
check fleet.yaml device-taints-tolerations/device-taint-pod-toleration \
        "basic-resourceclaimtemplate/pod-without-toleration=Pending:" "basic-resourceclaimtemplate/pod-with-toleration=Running:gpu-0"
# NoExecute (the device taint eviction controller): a DeviceTaintRule with
# effect NoExecute evicts the running pod holding a tainted device; the pod
# created after it never runs (devplane's allocator, like kube-scheduler's,
# refuses a device whose NoExecute taint the claim does not tolerate, so it
# stays Pending instead of being scheduled and then evicted)
check fleet.yaml,timeline-taint-noexecute.yaml device-taints-tolerations/device-taint-pod-noexecute \
        "basic-resourceclaimtemplate/pod-to-be-evicted=Evicted:gpu-0@10" "basic-resourceclaimtemplate/pod-no-execute=Pending:"
grep -q '"reason": "device gpu.example.com/node-0/gpu-0 has taint gpu.example.com/unhealthy=true:NoExecute (DeviceTaintRule example), not tolerated"' \
        "$tmp/last.json" || { echo "FAIL noexecute: the eviction reason"; exit 1; }
grep -q '"t=10s basic-resourceclaimtemplate/pod-to-be-evicted evicted: ' "$tmp/last.json" ||
        { echo "FAIL noexecute: no eviction event"; exit 1; }
# tolerationSeconds: no toleration is evicted at once, 300s after the taint, forever never
check fleet.yaml,timeline-taint-rule-at-10s.yaml device-taints-tolerations/device-taint-configurable-pod-eviction-time \
        "basic-resourceclaimtemplate/pod-no-toleration=Evicted:gpu-0@10" \
        "basic-resourceclaimtemplate/pod-with-toleration=Running:gpu-1" \
        "basic-resourceclaimtemplate/pod-with-300s-toleration=Evicted:gpu-2@310"
# consumable capacity on a NIC: both pods on nic-0, each allocation with its own shareID
check fleet-net.yaml net-consumable-capacity/net-consumable-capacity.yaml \
        "net-consumable-capacity/pod0=Running:nic-0" "net-consumable-capacity/pod1=Running:nic-0"
[ "$(shares | awk '{print $1, $2, $3, $4}')" = "net-consumable-capacity/pod0 pod0-nic nic nic-0
net-consumable-capacity/pod1 pod1-nic nic nic-0" ] || { echo "FAIL net: $(shares)"; exit 1; }
[ "$(shares | awk '$5 != "-" {print $5}' | sort -u | wc -l)" = 2 ] || { echo "FAIL net shareIDs: $(shares)"; exit 1; }
# native resources: two 1-CPU requests on the one NUMA device, distinct shareIDs
# (the node-allocatable accounting of DRANodeAllocatableResources is not simulated)
check fleet-cpu.yaml native-resource-request/native-resource-request.yaml \
        "native-resource-request/pod0=Running:numa-node-0,numa-node-0"
[ "$(shares | awk '{print $1, $2, $3, $4}')" = "native-resource-request/pod0 pod0-cpus cpu0 numa-node-0
native-resource-request/pod0 pod0-cpus cpu1 numa-node-0" ] || { echo "FAIL native: $(shares)"; exit 1; }
[ "$(shares | awk '$5 != "-" {print $5}' | sort -u | wc -l)" = 2 ] || { echo "FAIL native shareIDs: $(shares)"; exit 1; }
