#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's DRA charging beyond the device count (queue/dra-sources.c), on
# Kueue's own examples (examples/dra: sample-dra-counter-*, -capacity-*,
# -extended-resource-job) over data/dra-partitions.yaml:
#   - counter sources: count x the largest counter a matching device consumes
#     (80Gi: the figure Kueue's setup page shows, 85899345920); superseded and
#     incomplete pools are not read; too few devices is Kueue's message;
#   - capacity sources: the request's capacity rounded up by each device's
#     requestPolicy, the largest over the devices; their gate is off by
#     default (the Configuration is refused, exit 2);
#   - the extended-resource path: a DeviceClass's extendedResourceName is
#     charged under the class's mapping, and may not go through a class with
#     counter sources;
#   - the Configuration's rules (Kueue's validateDeviceClassMappings).
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SHARED_DIR:?}"
ex="$DP_SHARED_DIR/conformance/kueue/site/static/examples/dra"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$ex/sample-dra-counter-queues.yaml" ] || { echo "SKIP: no Kueue examples in $ex"; exit 0; }
cluster=data/dra-partitions.yaml

# usage and workloads of the first ClusterQueue as "resource=used" lines and "name state message"
summary() {
        python3 -c '
import json, sys
q = json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"][0]
for u in q["usage"]: print("%s=%s" % (u["resource"], u["used"]))
for w in q["workloads"]: print(w["state"], w.get("message", ""))' "$1"
}
run() { # files... -- expect a summary line
        "$DEVPLANE" simulate -f "$cluster" "$@" -o json >"$tmp/json" 2>"$tmp/err" || fail "simulate $*: exit $?: $(cat "$tmp/err")"
        summary "$tmp/json" >"$tmp/sum"
}
has() { grep -qxF -- "$1" "$tmp/sum" || fail "want \"$1\" in: $(cat "$tmp/sum")"; }

# counters: Kueue's example Job, one device of gpu.example.com: 80Gi, the largest the matching devices consume
run -f "$ex/sample-dra-counter-queues.yaml" -f "$ex/sample-dra-counter-job.yaml" --kueue-config data/kueue-config-counters.yaml
has "gpu.memory=85899345920"
has "Admitted Quota reserved in ClusterQueue cluster-queue"
# count 3: 3 x 80Gi (the stale pool's 800Gi and the partial pool's 400Gi are not read)
sed 's/count: 1/count: 3/' "$ex/sample-dra-counter-job.yaml" >"$tmp/three.yaml"
run -f "$ex/sample-dra-counter-queues.yaml" -f "$tmp/three.yaml" --kueue-config data/kueue-config-counters.yaml
has "gpu.memory=257698037760"
# count 6: five devices match (the three partitions and the two shareable ones,
# which consume no counter; neither of the two pools Kueue does not read)
sed 's/count: 1/count: 6/' "$ex/sample-dra-counter-job.yaml" >"$tmp/six.yaml"
run -f "$ex/sample-dra-counter-queues.yaml" -f "$tmp/six.yaml" --kueue-config data/kueue-config-counters.yaml
has "Pending spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Internal error: insufficient matching devices for counter driver: 5 device(s) match but 6 requested"
# a counter no device consumes
sed 's/name: memory/name: cores/' data/kueue-config-counters.yaml >"$tmp/cores.yaml"
run -f "$ex/sample-dra-counter-queues.yaml" -f "$ex/sample-dra-counter-job.yaml" --kueue-config "$tmp/cores.yaml"
has "Pending spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Internal error: matched devices have no consumesCounters entry for counter \"cores\""

# capacity: 4Gi asked, both shareable devices charge 4Gi (a step of 1Gi; the valid value 4Gi)
run -f "$ex/sample-dra-capacity-queues.yaml" -f "$ex/sample-dra-capacity-job.yaml" --kueue-config data/kueue-config-capacity.yaml
has "gpu.memory=4294967296"
# 4608Mi: shared-0 rounds to 5Gi, shared-1 to its valid value 8Gi: the largest, 8Gi
sed 's/"4Gi"/"4608Mi"/' "$ex/sample-dra-capacity-job.yaml" >"$tmp/cap.yaml"
run -f "$ex/sample-dra-capacity-queues.yaml" -f "$tmp/cap.yaml" --kueue-config data/kueue-config-capacity.yaml
has "gpu.memory=8589934592"
# 64Gi: over both devices' policies
sed 's/"4Gi"/"64Gi"/' "$ex/sample-dra-capacity-job.yaml" >"$tmp/big.yaml"
run -f "$ex/sample-dra-capacity-queues.yaml" -f "$tmp/big.yaml" --kueue-config data/kueue-config-capacity.yaml
has "Pending spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Invalid value: null: capacity request cannot be satisfied by any matched device's RequestPolicy for dimension \"gpu.example.com/memory\""

# the extended-resource path: charged under the class's mapping when it has one
printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n  deviceClassMappings: [{name: example.com/dra-gpu, deviceClassNames: [gpu.example.com]}]\n' >"$tmp/er.yaml"
sed 's|"example.com/gpu"\]|"example.com/dra-gpu", "example.com/gpu"]|; s|      - name: "example.com/gpu"|      - name: "example.com/dra-gpu"\n        nominalQuota: 2\n      - name: "example.com/gpu"|' \
        "$ex/sample-dra-queues.yaml" >"$tmp/queues.yaml"
run -f "$tmp/queues.yaml" -f "$ex/sample-dra-extended-resource-job.yaml" --kueue-config "$tmp/er.yaml"
has "example.com/dra-gpu=1"
has "example.com/gpu=0"
# without a mapping: its own name
run -f "$ex/sample-dra-queues.yaml" -f "$ex/sample-dra-extended-resource-job.yaml"
has "example.com/gpu=1"
# through a class with counter sources
run -f "$ex/sample-dra-queues.yaml" -f "$ex/sample-dra-extended-resource-job.yaml" --kueue-config data/kueue-config-counters.yaml
has "Pending spec.podSets[0].template.spec.containers[0]: Invalid value: \"example.com/gpu\": extended resource example.com/gpu resolves to DeviceClass gpu.example.com with counters configured; use ResourceClaimTemplates with CEL selectors for counter-based quota"
# the gate off: the request is an ordinary extended resource again
sed 's/^resources:/featureGates: {KueueDRAIntegrationExtendedResource: false}\nresources:/' "$tmp/er.yaml" >"$tmp/eroff.yaml"
run -f "$tmp/queues.yaml" -f "$ex/sample-dra-extended-resource-job.yaml" --kueue-config "$tmp/eroff.yaml"
has "example.com/dra-gpu=0"
has "example.com/gpu=1"

# the Configuration's rules: one error with the path, exit 2
bad() {
        set +e
        "$DEVPLANE" simulate -f "$cluster" --kueue-config "$1" >/dev/null 2>"$tmp/err"
        local rc=$?
        set -e
        [ $rc -eq 2 ] || fail "$2: exit $rc"
        grep -qF -- "$2" "$tmp/err" || fail "want \"$2\" in: $(cat "$tmp/err")"
}
cfg() { printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n%s\nresources:\n  deviceClassMappings:\n%s\n' "$1" "$2" >"$tmp/c.yaml"; }
cfg "" "  - {name: a, deviceClassNames: [x], sources: [{capacity: {name: m, driver: d.example.com, deviceSelector: {cel: {expression: 'true'}}}}]}"
bad "$tmp/c.yaml" "resources.deviceClassMappings[0].sources[0].capacity: Invalid value: true: capacity sources require KueueDRAIntegrationConsumableCapacity to be enabled"
cfg "featureGates: {KueueDRAIntegrationPartitionableDevices: false}" "  - {name: a, deviceClassNames: [x], sources: [{counter: {name: m, driver: d.example.com, deviceSelector: {cel: {expression: 'true'}}}}]}"
bad "$tmp/c.yaml" "sources[0].counter: Invalid value: true: counter sources require KueueDRAIntegrationPartitionableDevices to be enabled"
cfg "" "  - {name: a, deviceClassNames: [x], sources: [{}]}"
bad "$tmp/c.yaml" "resources.deviceClassMappings[0].sources[0]: Required value: exactly one source type must be set per entry"
cfg "" "  - {name: a, deviceClassNames: [x], sources: [{counter: {name: m, driver: d.example.com}}]}"
bad "$tmp/c.yaml" "sources[0]: counter.deviceSelector.cel.expression: Required value"
cfg "" "  - {name: a, deviceClassNames: [x], sources: [{counter: {name: m, driver: d.example.com, deviceSelector: {cel: {expression: 'device.nope'}}}}]}"
bad "$tmp/c.yaml" "sources[0]: counter.deviceSelector.cel.expression: Invalid value: \"device.nope\":"
cfg "" "  - {name: a, deviceClassNames: [x], sources: [{counter: {name: M, driver: d.example.com, deviceSelector: {cel: {expression: 'true'}}}}]}"
bad "$tmp/c.yaml" "sources[0]: counter.name: Invalid value: \"M\":"
# one class in two mappings: only with counters of different names
cfg "" "  - {name: a, deviceClassNames: [x]}
  - {name: b, deviceClassNames: [y, x]}"
bad "$tmp/c.yaml" "resources.deviceClassMappings[1]: deviceClassNames[1]: Invalid value: \"x\": device class already mapped to resource a"
src='sources: [{counter: {name: memory, driver: d.example.com, deviceSelector: {cel: {expression: "true"}}}}]'
cfg "" "  - {name: a, deviceClassNames: [x], $src}
  - {name: b, deviceClassNames: [x], $src}"
bad "$tmp/c.yaml" "deviceClassNames[0]: Invalid value: \"x\": device class already has a counter source for counter \"memory\""
cfg "" "  - {name: a, deviceClassNames: [x], $src}
  - {name: b, deviceClassNames: [x], ${src/memory/cores}}"
"$DEVPLANE" simulate -f "$cluster" --kueue-config "$tmp/c.yaml" >/dev/null 2>&1 || fail "two counters of one class: refused"
cfg "" "  - {name: a, deviceClassNames: [x]}
  - {name: a, deviceClassNames: [y]}"
bad "$tmp/c.yaml" "resources.deviceClassMappings[1]: name: Duplicate value: \"a\""
cfg "" "  - {name: a, deviceClassNames: [c1, c2, c3, c4, c5, c6, c7, c8, c9]}"
bad "$tmp/c.yaml" "deviceClassNames: Too many: 9: must have at most 8 items"
echo PASS
