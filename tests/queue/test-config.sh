#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's Configuration, the parts that change the order of admission
# (--kueue-config): admissionFairSharing with a ClusterQueue in
# UsageBasedAdmissionFairSharing mode admits the LocalQueue that used less
# (its status' consumedResources) before the higher priority;
# fairSharing.enable turns fair sharing on; an unknown field is one warning
# naming it, a gate devplane does not model a warning saying so; bad values
# (strategies Kueue's validation refuses, durations, weights, a negative
# consumedResources in the input) exit 2 with the path.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
printf 'apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: f}\nspec:\n  nodeGroups:\n  - {name: n, profile: example-gpu, count: 1, model: v1}\n' >"$tmp/fleet.yaml"
cases=cases
state() { # FILE NAME: the workload's state in simulate -o json
        python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))['asWritten']['queues']
print([w['state'] for c in d['clusterQueues'] for w in c['workloads'] if w['name'] == sys.argv[2]][0])" "$@"
}

# Admission Fair Sharing: lq-b used less, its low-priority workload goes first
printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nadmissionFairSharing:\n  usageHalfLifeTime: 168h\n  usageSamplingInterval: 5m\n  colour: blue\nfeatureGates: {PrioritizePreemptorWorkloads: true}\n' >"$tmp/afs.yaml"
"$DEVPLANE" simulate -f "$tmp/fleet.yaml" -f $cases/case-afs-lq-usage.yaml --kueue-config "$tmp/afs.yaml" -o json \
        >"$tmp/json" 2>"$tmp/err" || fail "simulate: exit $? $(cat "$tmp/err")"
[ "$(state "$tmp/json" default/wlb-low)" = Admitted ] || fail "wlb-low not admitted"
[ "$(state "$tmp/json" default/wla-high)" = Pending ] || fail "wla-high not pending"
grep -q 'afs.yaml: Configuration: admissionFairSharing: unknown field "colour": not a field of Kueue.s Configuration, ignored (line 6)' "$tmp/err" ||
        fail "warning: $(cat "$tmp/err")"
grep -q 'afs.yaml: Configuration: featureGates.PrioritizePreemptorWorkloads: not modelled' "$tmp/err" || fail "gate warning: $(cat "$tmp/err")"
# without the Configuration: priority order
"$DEVPLANE" simulate -f "$tmp/fleet.yaml" -f $cases/case-afs-lq-usage.yaml -o json >"$tmp/json" 2>/dev/null
[ "$(state "$tmp/json" default/wla-high)" = Admitted ] || fail "no Configuration: wla-high not admitted"

# fairSharing.enable: the report says fair sharing is on
printf 'apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing:\n  enable: true\n  preemptionStrategies: [LessThanInitialShare]\n' >"$tmp/fs.yaml"
"$DEVPLANE" simulate -f "$tmp/fleet.yaml" -f $cases/case-afs-lq-usage.yaml --kueue-config "$tmp/fs.yaml" -o json >"$tmp/json" 2>/dev/null
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['asWritten']['queues']['fairSharing'] is True" "$tmp/json" ||
        fail "fairSharing.enable not applied"

bad() { # CONFIG-TEXT EXPECTED [INPUT]
        printf '%s' "$1" >"$tmp/bad.yaml"
        set +e
        "$DEVPLANE" simulate -f "$tmp/fleet.yaml" -f "${3:-$cases/case-afs-lq-usage.yaml}" --kueue-config "$tmp/bad.yaml" >/dev/null 2>"$tmp/err"
        local rc=$?
        set -e
        [ $rc -eq 2 ] || fail "$2: exit $rc"
        grep -qF -- "$2" "$tmp/err" || fail "$2: $(cat "$tmp/err")"
}
h='apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
'
bad "${h}fairSharing: {preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]}" \
        "bad.yaml: Configuration: fairSharing.preemptionStrategies: must be [LessThanOrEqualToFinalShare], [LessThanInitialShare] or [LessThanOrEqualToFinalShare, LessThanInitialShare] (line 3)"
bad "${h}fairSharing: {preemptionStrategies: [Fairest]}" "Configuration: fairSharing.preemptionStrategies: must be"
bad "${h}admissionFairSharing: {usageHalfLifeTime: soon}" \
        "bad.yaml: Configuration: admissionFairSharing.usageHalfLifeTime: must be a duration such as 168h, 5m or 90s, not negative (line 3)"
bad "${h}admissionFairSharing: {usageSamplingInterval: -5m}" "admissionFairSharing.usageSamplingInterval: must be a duration"
bad "${h}admissionFairSharing: {resourceWeights: {cpu: -1}}" "admissionFairSharing.resourceWeights.cpu: must not be negative"
bad "${h}featureGates: {AdmissionFairSharing: maybe}" "bad.yaml: Configuration: featureGates.AdmissionFairSharing:"
sed 's/consumedResources: {cpu: "2"}/consumedResources: {cpu: "-2"}/' $cases/case-afs-lq-usage.yaml >"$tmp/neg.yaml"
bad "${h}admissionFairSharing: {}" \
        "LocalQueue default/lq-a: status.fairSharing.admissionFairSharingStatus.consumedResources.cpu: must not be negative" "$tmp/neg.yaml"
echo PASS
