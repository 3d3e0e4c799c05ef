#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's quota over time: a Timeline deleting an admitted Job's pod ends
# that workload (Finished), its quota is released, the next cycle admits the
# Job that waited and its pod is created and placed then; without the
# delete event the waiting Job stays pending with no pod.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$DEVPLANE" simulate -f data/over-time.yaml -o json >"$tmp/json" 2>"$tmp/err" || fail "simulate: exit $? $(cat "$tmp/err")"
python3 - "$tmp/json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
w = {x["name"]: x for x in d["queues"]["clusterQueues"][0]["workloads"]}
assert w["default/first"]["state"] == "Finished", w
assert w["default/first"]["message"] == "its pods ended: quota released", w
assert w["default/second"]["state"] == "Admitted" and w["default/second"]["placedPods"] == 1, w
ev = d["events"]
i = ev.index("t=30s default/first-0 deleted")
assert ev[i + 1] == "t=30s Kueue: default/first finished, its quota in ClusterQueue research released", ev
assert ev[i + 2] == "t=30s Kueue: default/second admitted in ClusterQueue research", ev
assert "t=30s default/second-0 bound to a100-0" in ev, ev
PY
"$DEVPLANE" simulate -f data/over-time.yaml >"$tmp/out" 2>/dev/null
grep -Eq '^default/second-0 +Running +a100-0 ' "$tmp/out" || fail "second-0 not running: $(cat "$tmp/out")"
grep -q 'ClusterQueue research, BestEffortFIFO: 1 admitted, 0 pending; example.com/gpu a100 4/4' "$tmp/out" || fail "queue line"

# no delete event: admission once at t=0, second waits without a pod
head -n -6 data/over-time.yaml >"$tmp/static.yaml"
"$DEVPLANE" simulate -f "$tmp/static.yaml" >"$tmp/out" 2>/dev/null || fail "static: exit $?"
grep -Eq '^  default/second +Job +Pending' "$tmp/out" || fail "static second: $(cat "$tmp/out")"
! grep -q 'second-0' "$tmp/out" || fail "static: pending Job stood up a pod"
echo PASS
