#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's DRA quota (--kueue-config): Kueue's own DRA examples
# (examples/dra: the queues and the ResourceClaimTemplate Job) charge the
# mapped resource per device request; the allocator then decides whether
# the admitted pods fit (an admitted Job whose pods stay Pending is shown
# as such); without a Configuration the claims are not counted (a note);
# what Kueue refuses (a DeviceClass not mapped, a ResourceClaim named
# directly) makes the workload Inadmissible with Kueue's message; the
# Configuration's unknown fields are warnings and bad values exit 2.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SHARED_DIR:?}"
ex="$DP_SHARED_DIR/conformance/kueue/site/static/examples/dra"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$ex/sample-dra-queues.yaml" ] || { echo "SKIP: no Kueue examples in $ex"; exit 0; }

# Kueue's example Job (generateName) on the example queues, counted through the mapping
"$DEVPLANE" simulate -f data/dra-cluster.yaml -f "$ex/sample-dra-queues.yaml" -f "$ex/sample-dra-rct-job.yaml" \
        --kueue-config data/kueue-config-dra.yaml -o json >"$tmp/json" 2>"$tmp/err" || fail "simulate: exit $?"
grep -q 'kueue-config-dra.yaml: Configuration: unknown field "colour": not a field of Kueue.s Configuration, ignored (line 10)' "$tmp/err" ||
        fail "warning: $(cat "$tmp/err")"
[ "$(grep -c warning "$tmp/err")" = 1 ] || fail "Kueue's own fields warned: $(cat "$tmp/err")"
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cq = d["asWritten"]["queues"]["clusterQueues"][0]
use = {(u["flavor"], u["resource"]): (u["used"], u["nominal"]) for u in cq["usage"]}
# two-gpus (3 pods x 1 device) and Kueue's sample (1 device): 4 of 8
assert use[("default-flavor", "example.com/gpu")] == ("4", "8"), use
w = {x["name"]: x for x in cq["workloads"]}
sample = [x for n, x in w.items() if n.startswith("default/sample-dra-rct-job-")]
assert len(sample) == 1 and sample[0]["state"] == "Admitted", w
assert sample[0]["flavors"]["example.com/gpu"] == "default-flavor", sample
# admitted, but the node has 2 devices for 4 pods: the allocator leaves two Pending
two = w["default/two-gpus"]
assert two["state"] == "Admitted" and two["placedPods"] + sample[0]["placedPods"] == 2, (two, sample)
assert two["unplacedPods"] + sample[0]["unplacedPods"] == 2, (two, sample)
six = w["default/six-gpus"]
assert six["state"] == "Pending", six
assert six["message"] == "couldn't assign flavors to pod set main: insufficient unused quota for example.com/gpu in flavor default-flavor, 1 more needed", six
PY

# the text says which admitted workload was not placed
"$DEVPLANE" simulate -f data/dra-cluster.yaml -f "$ex/sample-dra-queues.yaml" --kueue-config data/kueue-config-dra.yaml \
        >"$tmp/out" 2>/dev/null || fail "text: exit $?"
grep -Eq '^  default/two-gpus +Job +Admitted +cpu=default-flavor,example.com/gpu=default-flavor$' "$tmp/out" || fail "two-gpus line: $(cat "$tmp/out")"
grep -q '      admitted but not placed: 1 of its pods Pending (kube-scheduler)' "$tmp/out" || fail "not-placed line: $(cat "$tmp/out")"
grep -q 'example.com/gpu default-flavor 3/8' "$tmp/out" || fail "usage: $(cat "$tmp/out")"

# explain: the device quota that lets six-gpus in
"$DEVPLANE" explain job/six-gpus -f data/dra-cluster.yaml -f "$ex/sample-dra-queues.yaml" --kueue-config data/kueue-config-dra.yaml \
        >"$tmp/out" 2>/dev/null || fail "explain: exit $?"
grep -q '^  pod set main, flavor default-flavor: --set-quota cluster-queue/default-flavor/example.com/gpu=9 (+1)$' "$tmp/out" ||
        fail "explain six-gpus: $(cat "$tmp/out")"
"$DEVPLANE" explain job/two-gpus -f data/dra-cluster.yaml -f "$ex/sample-dra-queues.yaml" --kueue-config data/kueue-config-dra.yaml \
        >"$tmp/out" 2>/dev/null || fail "explain two-gpus: exit $?"
grep -q '^Pods: 2 placed, 1 Pending after admission (admitted is not placed' "$tmp/out" || fail "explain two-gpus: $(cat "$tmp/out")"

# without a Configuration the claims are not quota: both Jobs admitted, a note says why
"$DEVPLANE" simulate -f data/dra-cluster.yaml -f "$ex/sample-dra-queues.yaml" >"$tmp/out" 2>/dev/null || fail "no config: exit $?"
grep -q 'example.com/gpu default-flavor 0/8' "$tmp/out" || fail "no-config usage: $(cat "$tmp/out")"
grep -q "note: its pods' ResourceClaims are not counted in quota: Kueue counts them through its Configuration's resources.deviceClassMappings (devplane: --kueue-config FILE)" "$tmp/out" || fail "no-config note"

# a DeviceClass the Configuration does not map: Inadmissible, Kueue's field error
sed 's/gpu.example.com$/other.example.com/' data/kueue-config-dra.yaml >"$tmp/other.yaml"
"$DEVPLANE" simulate -f data/dra-cluster.yaml -f "$ex/sample-dra-queues.yaml" --kueue-config "$tmp/other.yaml" \
        >"$tmp/out" 2>/dev/null || fail "unmapped: exit $?"
grep -q '      Inadmissible: spec.podSets\[0\].template.spec.resourceClaims\[0\].resourceClaimTemplateName.deviceClassName: Not found: "gpu.example.com"' "$tmp/out" ||
        fail "unmapped message: $(cat "$tmp/out")"
# a ResourceClaim named directly
sed 's/resourceClaimTemplateName: one-gpu/resourceClaimName: shared/' data/dra-cluster.yaml >"$tmp/direct.yaml"
"$DEVPLANE" simulate -f "$tmp/direct.yaml" -f "$ex/sample-dra-queues.yaml" --kueue-config data/kueue-config-dra.yaml \
        >"$tmp/out" 2>/dev/null || true
grep -q 'Inadmissible: DynamicResourceAllocation feature does not support use of resource claims' "$tmp/out" ||
        fail "direct claim: $(cat "$tmp/out")"

# excludeResourcePrefixes: such requests are not quota (train-c's 8 GPUs fit then)
printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n  excludeResourcePrefixes: ["example.com/"]\n' >"$tmp/excl.yaml"
"$DEVPLANE" simulate -f data/gpu-flavors.yaml --kueue-config "$tmp/excl.yaml" >"$tmp/out" 2>/dev/null || fail "exclude: exit $?"
grep -q 'ClusterQueue research, BestEffortFIFO: 3 admitted, 0 pending; example.com/gpu a100 0/4 example.com/gpu t4 0/2' "$tmp/out" ||
        fail "exclude: $(cat "$tmp/out")"
# the DRA gate off: claims not counted, the note says why
printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfeatureGates: {KueueDRAIntegration: false}\nresources:\n  deviceClassMappings: [{name: example.com/gpu, deviceClassNames: [gpu.example.com]}]\n' >"$tmp/off.yaml"
"$DEVPLANE" simulate -f data/dra-cluster.yaml -f "$ex/sample-dra-queues.yaml" --kueue-config "$tmp/off.yaml" >"$tmp/out" 2>/dev/null || fail "gate off: exit $?"
grep -q "note: its pods' ResourceClaims are not counted in quota: the Configuration turns KueueDRAIntegration off" "$tmp/out" || fail "gate off: $(cat "$tmp/out")"

# bad Configuration values: one error with the file and the path, exit 2
bad() {
        set +e
        "$DEVPLANE" simulate -f data/dra-cluster.yaml --kueue-config "$1" >/dev/null 2>"$tmp/err"
        local rc=$?
        set -e
        [ $rc -eq 2 ] || fail "$2: exit $rc"
        grep -qF -- "$2" "$tmp/err" || fail "$2: $(cat "$tmp/err")"
}
printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n  deviceClassMappings:\n  - {name: a}\n' >"$tmp/b1.yaml"
bad "$tmp/b1.yaml" "b1.yaml: Configuration: resources.deviceClassMappings[0]: deviceClassNames: Required value: at least one device class name is required (line 5)"
printf 'apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nresources:\n  deviceClassMappings:\n  - {name: a, deviceClassNames: [x]}\n  - {name: b, deviceClassNames: [y, x]}\n' >"$tmp/b2.yaml"
bad "$tmp/b2.yaml" "resources.deviceClassMappings[1]: deviceClassNames[1]: Invalid value: \"x\": device class already mapped to resource a"
printf 'apiVersion: config.kueue.x-k8s.io/v1\nkind: Configuration\n' >"$tmp/b3.yaml"
bad "$tmp/b3.yaml" "b3.yaml: apiVersion: must be config.kueue.x-k8s.io/v1beta2 or v1beta1"
printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfeatureGates: {KueueDRAIntegration: maybe}\n' >"$tmp/b4.yaml"
bad "$tmp/b4.yaml" "b4.yaml: Configuration: featureGates.KueueDRAIntegration:"
echo PASS
