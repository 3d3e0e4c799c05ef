#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Volcano over time: a Timeline deleting the pods of the group that holds
# the node makes Volcano's session run again; the group that waited is
# allocated then and its pods are placed; with one pod deleted only, the
# waiting gang (minMember 2) still cannot go; without the delete event
# nothing moves after t=0. A pod the Timeline creates later is no task of
# Volcano's before it exists.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$DEVPLANE" simulate -f data/volcano-over-time.yaml --queue-policy volcano -o json >"$tmp/json" 2>"$tmp/err" ||
        fail "simulate: exit $? $(cat "$tmp/err")"
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
ev = d["events"]
i = ev.index("t=30s default/first-1 deleted")
assert ev[i + 1] == "t=30s Volcano: default/second-0 allocated, handed to the scheduler", ev
assert ev[i + 2] == "t=30s Volcano: default/second-1 allocated, handed to the scheduler", ev
assert "t=30s default/second-0 bound to gpu-0" in ev, ev
assert "t=30s default/second-1 bound to gpu-0" in ev, ev
g = {x["name"]: x for x in d["volcano"]["podGroups"]}
assert g["default/second"]["phase"] == "Running" and g["default/second"]["session"] > 1, g
PY
"$DEVPLANE" simulate -f data/volcano-over-time.yaml --queue-policy volcano >"$tmp/out" 2>/dev/null
grep -Eq '^default/second-0 +Running +gpu-0 ' "$tmp/out" || fail "second-0 not running: $(cat "$tmp/out")"

# one of first's pods deleted: 2 GPUs free, second needs 4 (minMember 2)
sed 's/delete: \[first-0, first-1\]/delete: [first-0]/' data/volcano-over-time.yaml >"$tmp/one.yaml"
"$DEVPLANE" simulate -f "$tmp/one.yaml" --queue-policy volcano >"$tmp/out" 2>/dev/null || fail "one: exit $?"
grep -Eq '^default/second-0 +Pending .*Volcano: PodGroup default/second Inqueue: 2/2 tasks in gang unschedulable' "$tmp/out" ||
        fail "one delete: $(cat "$tmp/out")"

# no delete event: Volcano runs once, at t=0
head -n -5 data/volcano-over-time.yaml >"$tmp/static.yaml"
"$DEVPLANE" simulate -f "$tmp/static.yaml" --queue-policy volcano >"$tmp/out" 2>/dev/null || fail "static: exit $?"
grep -Eq '^default/second-0 +Pending .*Volcano: PodGroup default/second Inqueue' "$tmp/out" || fail "static: $(cat "$tmp/out")"
# first's pod is created at t=30s: at t=0 Volcano allocates second, first waits then
"$DEVPLANE" simulate -f data/volcano-over-time-create.yaml --queue-policy volcano >"$tmp/out" 2>/dev/null ||
        fail "create: exit $?"
grep -Eq '^default/second-0 +Running +gpu-0 ' "$tmp/out" || fail "create: second-0 not running: $(cat "$tmp/out")"
grep -Eq '^default/first-0 +Pending .*Volcano: PodGroup default/first Inqueue' "$tmp/out" ||
        fail "create: first-0: $(cat "$tmp/out")"
# web (another scheduler's) placed meanwhile counts in Volcano's later session
"$DEVPLANE" simulate -f data/volcano-over-time-others.yaml --queue-policy volcano >"$tmp/out" 2>/dev/null ||
        fail "others: exit $?"
grep -Eq '^default/web +Running +n1 ' "$tmp/out" || fail "others: web: $(cat "$tmp/out")"
grep -Eq '^default/b-0 +Pending .*Volcano: PodGroup default/podgroup-b-0 Inqueue: 1/1 tasks in gang unschedulable' \
        "$tmp/out" || fail "others: b-0: $(cat "$tmp/out")"
echo PASS
