#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# devplane explain for a workload Kueue does not admit: Kueue's message,
# the ClusterQueue's usage and the quota that would let it in, as a
# --set-quota flag; simulate with that flag admits it (the answer
# suffices), --set-weight is taken, and bad what-if values exit 2.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$DEVPLANE" explain job/train-c -f data/gpu-flavors.yaml >"$tmp/out" 2>/dev/null || fail "explain: exit $?"
grep -q '^Workload default/train-c (Job), LocalQueue team, ClusterQueue research: Pending$' "$tmp/out" || fail "header: $(cat "$tmp/out")"
grep -q "^Why not admitted (Kueue): couldn't assign flavors to pod set main: insufficient quota for example.com/gpu in flavor a100" "$tmp/out" || fail "why"
grep -q '^  example.com/gpu in flavor a100: 4 used of 4 nominal, 0 available$' "$tmp/out" || fail "usage: $(cat "$tmp/out")"
grep -q '^  pod set main, flavor a100: --set-quota research/a100/example.com/gpu=14 (+10)$' "$tmp/out" || fail "a100 answer: $(cat "$tmp/out")"
grep -q '^  pod set main, flavor t4: --set-quota research/t4/example.com/gpu=10 (+8)$' "$tmp/out" || fail "t4 answer"
# a Job's name alone works too (a pending Job has no pods)
"$DEVPLANE" explain train-c -f data/gpu-flavors.yaml | cmp -s - "$tmp/out" || fail "explain train-c differs"

# the answer suffices: with it, simulate admits train-c on a100
"$DEVPLANE" simulate -f data/gpu-flavors.yaml --set-quota research/a100/example.com/gpu=14 -o json >"$tmp/json" 2>/dev/null
python3 - "$tmp/json" <<'PY'
import json, sys
cq = json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"][0]
w = {x["name"]: x for x in cq["workloads"]}
assert w["default/train-c"]["state"] == "Admitted" and w["default/train-c"]["flavors"] == {"example.com/gpu": "a100"}, w
assert {(u["flavor"], u["nominal"]) for u in cq["usage"]} == {("a100", "14"), ("t4", "2")}, cq["usage"]
PY

# the amount at the settled state alone (12: 8 more than the 4 used) is not
# enough: with more a100, train-b takes a100 too
"$DEVPLANE" simulate -f data/gpu-flavors.yaml --set-quota research/a100/example.com/gpu=12 >"$tmp/out" 2>/dev/null
grep -q "Pending: couldn't assign flavors to pod set main: insufficient quota for example.com/gpu in flavor t4.*insufficient unused quota for example.com/gpu in flavor a100, 2 more needed" "$tmp/out" ||
        fail "12 admitted train-c: $(cat "$tmp/out")"

# an admitted workload: its flavors and its pods
"$DEVPLANE" explain job/train-b -f data/gpu-flavors.yaml >"$tmp/out" 2>/dev/null || fail "explain train-b"
grep -q '^Flavors: example.com/gpu=t4$' "$tmp/out" || fail "train-b flavors: $(cat "$tmp/out")"
grep -q '^Pods: 1 placed, 0 Pending after admission$' "$tmp/out" || fail "train-b pods: $(cat "$tmp/out")"

# a gated plain Pod: kube-scheduler's answer, then Kueue's for its workload
"$DEVPLANE" explain b -f data/plain-pods.yaml >"$tmp/out" 2>/dev/null || fail "explain pod b: exit $?"
grep -q '^Scheduling is blocked due to non-empty scheduling gates$' "$tmp/out" || fail "pod b gate: $(cat "$tmp/out")"
grep -q '^Workload default/b (Pod), LocalQueue lq, ClusterQueue q: Pending$' "$tmp/out" || fail "pod b workload"
grep -q '^  pod set main, flavor spot: --set-quota q/spot/cpu=6 (+2)$' "$tmp/out" || fail "pod b answer: $(cat "$tmp/out")"

# what-if values the input does not have, or malformed: exit 2 with the flag named
bad() {
        set +e
        "$DEVPLANE" simulate -f data/gpu-flavors.yaml "$1" "$2" >/dev/null 2>"$tmp/err"
        local rc=$?
        set -e
        [ $rc -eq 2 ] || fail "$2: exit $rc"
        grep -qF -- "$3" "$tmp/err" || fail "$2: $(cat "$tmp/err")"
}
bad --set-quota research/h100/example.com/gpu=1 "--set-quota research/h100/example.com/gpu: ClusterQueue research has no flavor h100"
bad --set-quota nope/a100/example.com/gpu=1 "ClusterQueue nope is not in the input"
bad --set-quota research/a100/cpu=1 "flavor a100 of ClusterQueue research has no quota for cpu"
bad --set-quota research/a100=1 "must be CLUSTERQUEUE/FLAVOR/RESOURCE=QUANTITY"
bad --set-quota research/a100/example.com/gpu=-1 "must be a quantity >= 0"
bad --set-weight research "must be CLUSTERQUEUE=WEIGHT"
bad --set-weight nope=2 "--set-weight nope: ClusterQueue nope is not in the input"
"$DEVPLANE" simulate -f data/gpu-flavors.yaml --set-weight research=2 -o json 2>/dev/null |
        python3 -c 'import json, sys; assert json.load(sys.stdin)["asWritten"]["queues"]["clusterQueues"][0]["fairSharingWeight"] == "2"' ||
        fail "--set-weight research=2"
echo PASS
