#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kubernetes 1.37 compatibility groups from a device profile, over the real
# binary: `devplane agent --dra --profile a100-dual-mode` publishes, per GPU,
# MIG-mode partitions in group [mig] and vGPU-mode partitions plus the whole
# GPU in group [vgpu], all drawing on one memory counter set; then
# `devplane allocate` over the written slices places a mix of MIG, vGPU,
# whole-GPU and two-mode claims, and no GPU ever ends with both modes (nor
# more memory than it has). Waits are on the agent's log line, no sleeps.
set -euo pipefail
: "${DEVPLANE:?DEVPLANE must point to the devplane binary}"
T=$(mktemp -d "${TMPDIR:-/tmp}/dp-compat.XXXXXX")
AGENT_PID=
cleanup() {
        local rc=$?
        [ -n "$AGENT_PID" ] && { kill -TERM "$AGENT_PID" 2>/dev/null || true; wait "$AGENT_PID" 2>/dev/null || true; }
        [ $rc -ne 0 ] && [ -e "$T/agent.log" ] && tail -n 20 "$T/agent.log" >&2
        rm -rf "$T"
        exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok - $*"; }
mkdir -p "$T/plugins" "$T/state" "$T/reg" "$T/kp" "$T/cdi" "$T/slices" "$T/claims"

# The agent logs one line per publication; read its log through a FIFO and
# stop at the first one.
mkfifo "$T/log.fifo"
"$DEVPLANE" agent --dra --no-device-plugin --profile a100-dual-mode --node-name node-a \
        --plugin-dir "$T/plugins" --state-dir "$T/state" --registry-dir "$T/reg" --plugins-dir "$T/kp" \
        --cdi-dir "$T/cdi" --slices-dir "$T/slices" --claims-dir "$T/claims" >"$T/log.fifo" 2>&1 &
AGENT_PID=$!
timeout 30 grep -m1 "ResourceSlices generation 1" <"$T/log.fifo" >"$T/agent.log" ||
        fail "the agent wrote no ResourceSlices"
SL=$T/slices/node-a-gpu.nvidia.com.yaml
[ -s "$SL" ] || fail "no slice file $SL"
pass "agent --dra --profile a100-dual-mode wrote $(basename "$SL")"

/usr/bin/python3 - "$SL" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
devs = {d["name"]: d for s in docs for d in s["spec"].get("devices", [])}
sets = [c["name"] for s in docs for c in s["spec"].get("sharedCounters", [])]
assert sets == ["gpu-%d-memory" % i for i in range(8)], sets
assert len(devs) == 8 * 12, len(devs)
for i in range(8):
    for name, groups, mem in ([("gpu-%d-mig-%d" % (i, j), ["mig"], "10Gi") for j in range(7)] +
                              [("gpu-%d-vgpu-%d" % (i, j), ["vgpu"], "20Gi") for j in range(4)] +
                              [("gpu-%d" % i, ["vgpu"], "80Gi")]):
        cc = devs[name]["consumesCounters"]
        assert len(cc) == 1 and cc[0]["counterSet"] == "gpu-%d-memory" % i, (name, cc)
        assert cc[0]["compatibilityGroups"] == groups, (name, cc)
        assert cc[0]["counters"]["memory"]["value"] == mem, (name, cc)
PY
pass "every GPU: 7 MIG [mig], 4 vGPU + whole [vgpu] over gpu-<i>-memory"

# Claims: MIG and vGPU ones interleaved, two whole GPUs, two-mode claims.
/usr/bin/python3 - "$T/classes.yaml" "$T/claims.yaml" <<'PY'
import sys, yaml
docs = []
for mode in ("mig", "vgpu", "whole"):
    docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": mode},
                 "spec": {"selectors": [{"cel": {"expression":
                     "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].mode == '%s'" % mode}}]}})
yaml.safe_dump_all(docs, open(sys.argv[1], "w"), sort_keys=False)
docs = []
def claim(name, reqs):
    docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": name, "namespace": "default"},
                 "spec": {"devices": {"requests": [{"name": r, "exactly": {"deviceClassName": c, "count": n}}
                                                   for r, c, n in reqs]}}})
k = 0
for i in range(12):
    claim("mig-%d" % i, [("p", "mig", 1)])
    if i < 8:
        claim("vgpu-%d" % i, [("p", "vgpu", 1)])
    if i % 4 == 0:
        claim("both-%d" % i, [("m", "mig", 2), ("v", "vgpu", 1)])
claim("whole-0", [("g", "whole", 1)])
claim("whole-1", [("g", "whole", 1)])
yaml.safe_dump_all(docs, open(sys.argv[2], "w"), sort_keys=False)
PY
timeout 60 "$DEVPLANE" allocate -f "$T/slices" -f "$T/classes.yaml" -f "$T/claims.yaml" -o json >"$T/out.json" 2>"$T/alloc.err" ||
        fail "allocate: exit $?: $(cat "$T/alloc.err")"
/usr/bin/python3 - "$T/out.json" <<'PY'
import json, re, sys
items = json.load(open(sys.argv[1]))["items"]
assert len(items) == 25, len(items)
modes, mem = {}, {}
size = {"mig": 10, "vgpu": 20}
for c in items:
    res = c["status"]["allocation"]["devices"]["results"]
    for r in res:
        m = re.fullmatch(r"gpu-(\d+)(?:-(mig|vgpu)-\d+)?", r["device"])
        assert m and r["pool"] == "node-a", r
        gpu, mode = int(m.group(1)), m.group(2) or "whole"
        modes.setdefault(gpu, set()).add(mode)
        mem[gpu] = mem.get(gpu, 0) + size.get(mode, 80)
    if c["metadata"]["name"].startswith("both-"):
        gm = {re.match(r"gpu-(\d+)", r["device"]).group(1) for r in res if r["request"] == "m"}
        gv = {re.match(r"gpu-(\d+)", r["device"]).group(1) for r in res if r["request"] == "v"}
        assert not gm & gv, (c["metadata"]["name"], res)
for gpu, ms in modes.items():
    assert not ("mig" in ms and ms & {"vgpu", "whole"}), ("GPU %d holds both modes" % gpu, ms)
    assert mem[gpu] <= 80, ("GPU %d over its memory" % gpu, mem[gpu])
assert any("mig" in ms for ms in modes.values()) and any("vgpu" in ms for ms in modes.values())
assert sum("whole" in ms for ms in modes.values()) == 2
PY
pass "25 claims allocated (MIG, vGPU, whole, two-mode); no GPU holds both modes or more than 80Gi"

# One more MIG partition, on a GPU already in vGPU mode: refused, and the
# reason names both sides' groups.
GPU=$(/usr/bin/python3 - "$T/out.json" "$T/extra.yaml" <<'PY'
import json, re, sys
items = json.load(open(sys.argv[1]))["items"]
gpu = next(int(re.match(r"gpu-(\d+)-vgpu-", r["device"]).group(1)) for c in items
           for r in c["status"]["allocation"]["devices"]["results"] if "-vgpu-" in r["device"])
open(sys.argv[2], "w").write(
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: extra, namespace: default}\n"
    "spec: {devices: {requests: [{name: p, exactly: {deviceClassName: mig, selectors: [{cel: {expression: "
    "\"device.attributes['gpu.nvidia.com'].index == %d\"}}]}}]}}\n" % gpu)
print(gpu)
PY
)
rc=0
timeout 60 "$DEVPLANE" allocate -f "$T/slices" -f "$T/classes.yaml" -f "$T/out.json" -f "$T/extra.yaml" -o json \
        >/dev/null 2>"$T/extra.err" || rc=$?
[ "$rc" = 1 ] || fail "MIG on vGPU-mode gpu-$GPU: exit $rc, expected 1: $(cat "$T/extra.err")"
grep -q "on counter set gpu-$GPU-memory with groups \[vgpu\]; gpu-$GPU-mig-0 has \[mig\] (incompatible compatibility groups)" \
        "$T/extra.err" || fail "reason: $(cat "$T/extra.err")"
pass "a MIG partition on vGPU-mode gpu-$GPU is refused with the groups reason"

# A profile with three groups on a mode is bad input: exit 2, the field named.
cat >"$T/bad.yaml" <<'YAML'
apiVersion: devplane.io/v1alpha1
kind: DeviceProfile
metadata: {name: bad}
spec:
  domain: example.com
  devices: [{count: 1, memory: 8Gi}]
  partitionModes: [{name: a, compatibilityGroups: [x, y, z], count: 1}]
YAML
rc=0
# (own directories: the agent above still holds its state directory, and a second agent
# on it is refused before its profile is read)
timeout 20 "$DEVPLANE" agent --dra --no-device-plugin --profile "$T/bad.yaml" --node-name node-b \
        --plugin-dir "$T/bad-plugins" --state-dir "$T/bad-state" --slices-dir "$T/bad-slices" 2>"$T/bad.err" || rc=$?
[ "$rc" = 2 ] || fail "bad profile: exit $rc, expected 2: $(cat "$T/bad.err")"
grep -q "bad.yaml:7:51: DeviceProfile bad: spec.partitionModes\[0\].compatibilityGroups: at most 2 compatibility groups per device (KEP-5963), got 3" \
        "$T/bad.err" || fail "bad profile message: $(cat "$T/bad.err")"
pass "a mode with 3 compatibility groups: exit 2 naming file, object and field"
