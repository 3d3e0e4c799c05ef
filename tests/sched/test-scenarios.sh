#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Acceptance scenarios 10, 11, 12 and 13 (../shared/scenarios/README.md) at
# cluster level through `devplane simulate -o json` and `devplane explain`,
# on the inputs in tests/sched/scenarios/, with every placement asserted
# exactly; and scenario 2's explain of a time-sliced GPU (shared memory and
# fault domain). Each input also runs twice more to byte-identical output.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
here="$DP_SOURCE_DIR/tests/sched/scenarios"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# check FILE 'ns/pod=STATE:dev,dev[@deletedAt]' ...: every pod of the
# as-written run, exactly
check() {
        local f=$1
        shift
        "$DEVPLANE" simulate -f "$here/$f" -o json >"$tmp/$f.json" || fail "$f: simulate"
        for i in 1 2; do
                "$DEVPLANE" simulate -f "$here/$f" -o json | cmp -s - "$tmp/$f.json" || fail "$f: run $i differs"
        done
        python3 - "$tmp/$f.json" "$f" "$@" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
got = {}
for p in d["asWritten"]["pods"]:
    v = p["state"] + ":" + ",".join(p["devices"].get("v1", []) + p["devices"].get("v2", []))
    if "deletedAt" in p:
        v += "@%d" % p["deletedAt"]
    got[p["name"]] = v
want = dict(a.split("=", 1) for a in sys.argv[3:])
bad = ["%s: got %s, want %s" % (k, got.get(k), v) for k, v in want.items() if got.get(k) != v]
if set(got) != set(want):
    bad.append("pods %s != %s" % (sorted(got), sorted(want)))
if bad:
    print("FAIL", sys.argv[2], *bad, sep="\n  ", file=sys.stderr)
    sys.exit(1)
PY
}
# claims FILE.json POD 'claim:request=device[:share]' ...: the pod's claims, exactly
claims() {
        python3 - "$tmp/$1" "$2" "${@:3}" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["asWritten"]["pods"] if p["name"] == sys.argv[2]][0]
got = ["%s:%s=%s" % (c["name"], r["request"], r["device"]) + (":share" if "shareID" in r else "")
       for c in p.get("claims", []) for r in c["results"]]
if got != sys.argv[3:]:
    print("FAIL claims of %s: got %s, want %s" % (sys.argv[2], got, sys.argv[3:]), file=sys.stderr)
    sys.exit(1)
PY
}

# 10: two 6Gi partitions over an 8Gi counter; one at a time
check s10-partitionable.yaml "default/pod-a=Deleted:part-a@60" "default/pod-b=Running:part-b"
python3 - "$tmp/s10-partitionable.yaml.json" <<'PY' || fail "scenario 10: pod-b must start when pod-a goes"
import json, sys
p = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
assert p["default/pod-b"]["createdAt"] == 10 and p["default/pod-b"]["startedAt"] == 60, p["default/pod-b"]
PY
sed 's/^  - {at: 60s, delete: \[pod-a\]}$//' "$here/s10-partitionable.yaml" >"$tmp/s10-keep.yaml"
"$DEVPLANE" explain pod pod-b -f "$tmp/s10-keep.yaml" >"$tmp/x10" || fail "explain pod-b"
grep -q "^Pod default/pod-b: Pending" "$tmp/x10" || fail "scenario 10 without the deletion: $(cat "$tmp/x10")"
grep -q "^  1: cannot allocate all claims (node-0)$" "$tmp/x10" || fail "scenario 10 reason: $(cat "$tmp/x10")"
grep -qi "counter" "$tmp/x10" || fail "scenario 10: the reason should name the counter: $(cat "$tmp/x10")"

# 11: five 8Gi shares of a 40Gi GPU, each with its own shareID; the sixth waits
check s11-consumable.yaml "default/share-0=Running:gpu-0" "default/share-1=Running:gpu-0" \
        "default/share-2=Running:gpu-0" "default/share-3=Running:gpu-0" "default/share-4=Running:gpu-0" \
        "default/share-5=Pending:"
python3 - "$tmp/s11-consumable.yaml.json" <<'PY' || fail "scenario 11: shareIDs"
import json, sys
pods = json.load(open(sys.argv[1]))["asWritten"]["pods"]
ids = [r["shareID"] for p in pods for c in p.get("claims", []) for r in c["results"]]
assert len(ids) == 5 and len(set(ids)) == 5 and all(ids), ids
PY
"$DEVPLANE" explain pod share-5 -f "$here/s11-consumable.yaml" >"$tmp/x11" || fail "explain share-5"
grep -q "^Pod default/share-5: Pending" "$tmp/x11" || fail "scenario 11: $(cat "$tmp/x11")"
"$DEVPLANE" explain pod share-0 -f "$here/s11-consumable.yaml" >"$tmp/x11b" || fail "explain share-0"
grep -q "^gpu-0 (shared.example.com, pool node-0) is shared (DRA: multiple allocations, each with its own shareID): also held by default/share-1 default/share-2 default/share-3 default/share-4\.$" "$tmp/x11b" ||
        fail "scenario 11: explain share-0 should name the sharers: $(cat "$tmp/x11b")"

# 12: firstAvailable [h100, a100]: the H100 while free, then A100s; results request/subrequest
check s12-prioritized.yaml "default/p1=Deleted:h100-0@60" "default/p2=Running:a100-0" "default/p3=Running:a100-1" \
        "default/p4=Running:h100-0"
claims s12-prioritized.yaml.json default/p2 "p2-gpu:gpu/a100=a100-0"
claims s12-prioritized.yaml.json default/p3 "p3-gpu:gpu/a100=a100-1"
claims s12-prioritized.yaml.json default/p4 "p4-gpu:gpu/h100=h100-0"
python3 - "$tmp/s12-prioritized.yaml.json" <<'PY' || fail "scenario 12: p4 must wait for the H100"
import json, sys
p = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
assert p["default/p4"]["createdAt"] == 30 and p["default/p4"]["startedAt"] == 60, p["default/p4"]
PY
sed 's/^  - {at: 60s, delete: \[p1\]}$//' "$here/s12-prioritized.yaml" >"$tmp/s12-keep.yaml"
"$DEVPLANE" simulate -f "$tmp/s12-keep.yaml" -o json >"$tmp/s12-keep.json"
claims s12-keep.json default/p1 "p1-gpu:gpu/h100=h100-0"
claims s12-keep.json default/p4

# 13: extended resource through DRA; the device plugin serves the name where it advertises it
check s13-extended.yaml "default/on-dp=Running:gpu-0,gpu-1" "default/on-dra=Running:gpu-0,gpu-1" \
        "default/on-both=Running:gpu-0"
python3 - "$tmp/s13-extended.yaml.json" <<'PY' || fail "scenario 13: models"
import json, sys
p = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
want = {"default/on-dp": ("dp-0", "V1"), "default/on-dra": ("dra-0", "V2"), "default/on-both": ("both-0", "V1")}
for k, (node, model) in want.items():
    assert (p[k]["node"], p[k]["model"]) == (node, model), (k, p[k])
PY
claims s13-extended.yaml.json default/on-dra "on-dra-extended-resources:container-0-request-0=gpu-0" \
        "on-dra-extended-resources:container-0-request-0=gpu-1"

# NoExecute device failures: the eviction controller evicts pods whose claims
# do not tolerate the taint (at once, or after tolerationSeconds); the claims
# are deallocated (the GPUs are held by nobody); a NoSchedule failure evicts nobody
check noexecute-failure.yaml "default/a=Evicted:gpu-0@30" "default/b=Evicted:gpu-1@100" "default/c=Running:gpu-2"
python3 - "$tmp/noexecute-failure.yaml.json" <<'PY' || fail "NoExecute failure: reasons and holders"
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
p = {p["name"]: p for p in d["pods"]}
assert p["default/a"]["reason"] == "device gpu.example.com/node-0/gpu-0 has taint gpu.example.com/unhealthy:NoExecute (in its ResourceSlice), not tolerated", p["default/a"]
assert p["default/b"]["reason"] == "device gpu.example.com/node-0/gpu-1 has taint gpu.example.com/unhealthy:NoExecute (in its ResourceSlice), tolerated for 60s", p["default/b"]
held = {u["id"]: u["heldBy"] for n in d["nodes"] for u in n["units"]}
assert held["gpu-0"] == [] and held["gpu-1"] == [] and held["gpu-2"] == ["default/c"], held
assert d["summary"]["evicted"] == 2, d["summary"]
PY
"$DEVPLANE" explain pod a -f "$here/noexecute-failure.yaml" >"$tmp/xa" || fail "explain a"
grep -q "^Evicted at t=30s by the device taint eviction controller: device gpu.example.com/node-0/gpu-0 has taint" "$tmp/xa" ||
        fail "explain of an evicted pod: $(cat "$tmp/xa")"
# a v1alpha3 DeviceTaintRule choosing its device by class and CEL selector
check noexecute-rule-cel.yaml "default/p0=Running:gpu-0" "default/p1=Evicted:gpu-1@20"
grep -q '"reason": "device gpu.example.com/node-0/gpu-1 has taint example.com/maintenance=now:NoExecute (DeviceTaintRule gpu-1-maintenance), not tolerated"' \
        "$tmp/noexecute-rule-cel.yaml.json" || fail "rule with a CEL selector: reason"
sed 's/effect: NoExecute}}/effect: NoPlease}}/' "$here/noexecute-failure.yaml" >"$tmp/bad-effect.yaml"
set +e
"$DEVPLANE" simulate -f "$tmp/bad-effect.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && [ ! -s "$tmp/out" ] || fail "bad fail.effect: exit $rc"
grep -q "bad-effect.yaml: Timeline: spec.events\[0\].fail.effect: must be NoSchedule or NoExecute" "$tmp/err" ||
        fail "bad fail.effect message: $(cat "$tmp/err")"

# 2: explain says a time-sliced GPU is shared, with its memory and fault domain
"$DEVPLANE" explain pod chat-0 -f "$DP_SOURCE_DIR/examples/seed.yaml" >"$tmp/x2"
grep -q "is shared (time-slicing): also held by" "$tmp/x2" || fail "scenario 2 explain: $(cat "$tmp/x2")"
grep -q "They share its memory and its fault domain" "$tmp/x2" || fail "scenario 2 explain: $(cat "$tmp/x2")"
echo "PASS test-scenarios"
