#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's resource transformations (Configuration resources.transformations,
# queue/transform.c) on Kueue's own admin example (examples/admin:
# shared-quota-setup.yaml, whose comment gives the Configuration, and
# shared-quota-sample-job.yaml, 3 CPUs): each CPU adds one cpu_credit, and
# the 14 credits admit 4 of 5 sample Jobs although cpu alone would take 6
# (9 on-demand + 9 spot); Replace drops the input; multiplyBy multiplies by
# another request; the rules Kueue validates exit 2 with the path.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SHARED_DIR:?}"
ad="$DP_SHARED_DIR/conformance/kueue/site/static/examples/admin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$ad/shared-quota-setup.yaml" ] || { echo "SKIP: no Kueue examples in $ad"; exit 0; }
job="$ad/shared-quota-sample-job.yaml"
cfg() { printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n  transformations:\n%s\n' "$1" >"$tmp/cfg.yaml"; }
sim() { "$DEVPLANE" simulate -f data/nodes-on-demand-spot.yaml -f "$ad/shared-quota-setup.yaml" "$@" >"$tmp/out" 2>"$tmp/err" || fail "simulate: exit $?: $(cat "$tmp/err")"; }

# the example's Configuration (its comment): Retain, 1 credit per CPU
cfg "  - {input: cpu, strategy: Retain, outputs: {cpu_credits: 1}}"
sim -f "$job" -f "$job" -f "$job" -f "$job" -f "$job" --kueue-config "$tmp/cfg.yaml"
grep -q 'ClusterQueue team-cluster-queue, BestEffortFIFO: 4 admitted, 1 pending; cpu on-demand 9/9 cpu spot 3/9 cpu_credits credits 12/14' "$tmp/out" ||
        fail "credits: $(cat "$tmp/out")"
grep -q "Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu_credits in flavor credits, 1 more needed" "$tmp/out" ||
        fail "credits message: $(cat "$tmp/out")"
# without it the credits are not charged: all five admitted
sim -f "$job" -f "$job" -f "$job" -f "$job" -f "$job"
grep -q 'BestEffortFIFO: 5 admitted, 0 pending; cpu on-demand 9/9 cpu spot 6/9 cpu_credits credits 0/14' "$tmp/out" || fail "no config: $(cat "$tmp/out")"
# Replace: cpu is no longer quota, only the credits (2 per CPU: 14 / 6 = 2 Jobs)
cfg "  - {input: cpu, strategy: Replace, outputs: {cpu_credits: 2}}"
sim -f "$job" -f "$job" -f "$job" --kueue-config "$tmp/cfg.yaml"
grep -q 'BestEffortFIFO: 2 admitted, 1 pending; cpu on-demand 0/9 cpu spot 0/9 cpu_credits credits 12/14' "$tmp/out" || fail "replace: $(cat "$tmp/out")"
# multiplyBy: credits per CPU times the pod's request of another resource (example.com/weight: 2)
sed 's/cpu: "3"/cpu: "3"\n            example.com\/weight: "2"\n          limits:\n            example.com\/weight: "2"/' "$job" >"$tmp/weighted.yaml"
# (the weight itself is excluded from quota: transformations come before the excluded prefixes)
cfg "  - {input: cpu, strategy: Retain, multiplyBy: example.com/weight, outputs: {cpu_credits: 1}}
  excludeResourcePrefixes: [example.com/]"
sim -f "$tmp/weighted.yaml" -f "$tmp/weighted.yaml" --kueue-config "$tmp/cfg.yaml"
grep -q 'BestEffortFIFO: 2 admitted, 0 pending; cpu on-demand 6/9 cpu spot 0/9 cpu_credits credits 12/14' "$tmp/out" || fail "multiplyBy: $(cat "$tmp/out")"

# the rules: one error with the path, exit 2
bad() {
        set +e
        "$DEVPLANE" simulate -f data/nodes-on-demand-spot.yaml --kueue-config "$tmp/cfg.yaml" >/dev/null 2>"$tmp/err"
        local rc=$?
        set -e
        [ $rc -eq 2 ] || fail "$1: exit $rc"
        grep -qF -- "$1" "$tmp/err" || fail "want \"$1\" in: $(cat "$tmp/err")"
}
cfg "  - {input: cpu, strategy: Keep, outputs: {c: 1}}"
bad 'resources.transformations[0].strategy: Unsupported value: "Keep": supported values: "Retain", "Replace"'
cfg "  - {input: cpu, outputs: {c: 1}}
  - {input: cpu, outputs: {d: 1}}"
bad 'resources.transformations[1]: input: Duplicate value: "cpu"'
cfg "  - {outputs: {c: 1}}"
bad 'resources.transformations[0]: input: Required value'
echo PASS
