#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Scenario 14 at cluster level: workloads of ../shared/conformance/dra-example-driver/
# through `devplane simulate` on an example-gpu node, with the placement each
# README states (which pods run, which GPUs they get, who shares).
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}" "${DP_SHARED_DIR:?}"
conf="$DP_SHARED_DIR/conformance/dra-example-driver"
here="$DP_SOURCE_DIR/tests/sched/conformance"
[ -d "$conf" ] || { echo "SKIP: no $conf"; exit 0; }

# check FLEET[,TIMELINE] WORKLOAD 'ns/pod=STATE:dev,dev' ...
check() {
        local fleet=${1%%,*} wl=$2 extra=()
        [ "$fleet" = "$1" ] || extra=(-f "$here/${1#*,}")
        shift 2
        "$DEVPLANE" simulate -f "$here/$fleet" -f "$conf/$wl" "${extra[@]}" -o json |
                python3 -c '
import json, sys
d = json.load(sys.stdin)
got = {p["name"]: p["state"] + ":" + ",".join(p["devices"].get("v2", [])) for p in d["asWritten"]["pods"]}
want = dict(a.split("=", 1) for a in sys.argv[2:])
bad = [f"{k}: got {got.get(k)}, want {v}" for k, v in want.items() if got.get(k) != v]
if set(got) != set(want): bad.append(f"pods {sorted(got)} != {sorted(want)}")
if bad:
    print("FAIL", sys.argv[1], *bad, sep="\n  ")
    sys.exit(1)
print("PASS", sys.argv[1])
' "$wl" "$@"
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
