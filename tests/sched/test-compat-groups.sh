#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 7's simulate scenario (examples/compat-groups.yaml): GPUs offering a
# MIG mode [mig] and a vGPU mode [vgpu] over one memory counter, published by
# the node group's DRA driver option dra.compatGroups, mixed workloads. From `devplane simulate -o json`: no GPU ever holds partitions of
# both modes at once (checked at every start and deletion), memory never
# over-committed, a GPU does switch mode once emptied; pods wait when only the
# other mode is free, with the incompatible-groups reason in `devplane
# explain`; output is byte-identical on repeated runs. A control run with the
# same partitions written out without groups shows the checker would see a mix.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ex="$DP_SOURCE_DIR/examples/compat-groups.yaml"

# determinism, every format
for o in table json yaml; do
        "$DEVPLANE" simulate -f "$ex" -o "$o" >"$tmp/a.$o" || fail "simulate -o $o"
        for i in 1 2 3; do
                "$DEVPLANE" simulate -f "$ex" -o "$o" >"$tmp/b.$o"
                cmp -s "$tmp/a.$o" "$tmp/b.$o" || fail "-o $o: run $i differs"
        done
done

# modes over time: a pod holds its devices from startedAt until deletedAt
# (or the end). Device names: gpu-<i>-mig-<j> [mig], gpu-<i>-vgpu-<j> and
# gpu-<i> [vgpu]; memory 20Gi, 20Gi, 80Gi of the GPU's 80Gi counter.
check_modes() { # check_modes JSON EXPECT(never-mixed|mixed)
        python3 - "$1" "$2" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1])); want = sys.argv[2]
run = rep["asWritten"]; end = run["endSeconds"]
held = []  # (start, stop, node, gpu, mode, GiB, pod)
for p in run["pods"]:
    if "startedAt" not in p:
        continue
    stop = p.get("deletedAt", end + 1)
    for d in p.get("devices", {}).get("v2", []):
        m = re.fullmatch(r"(gpu-\d+)(?:-(mig|vgpu)-\d+)?", d)
        if not m:
            sys.exit("unexpected device %s of %s" % (d, p["name"]))
        mode = m.group(2) or "vgpu"
        gib = {"mig": 20, "vgpu": 20}.get(m.group(2), 80)
        held.append((p["startedAt"], stop, p["node"], m.group(1), mode, gib, p["name"]))
times = sorted({h[0] for h in held} | {h[1] for h in held})
mixed, modes_seen = [], {}
for t in times:
    now = [h for h in held if h[0] <= t < h[1]]
    gpus = {}
    for h in now:
        g = gpus.setdefault((h[2], h[3]), {"modes": set(), "gib": 0, "pods": []})
        g["modes"].add(h[4]); g["gib"] += h[5]; g["pods"].append(h[6])
        modes_seen.setdefault((h[2], h[3]), set()).add(h[4])
    for k, g in sorted(gpus.items()):
        if len(g["modes"]) > 1:
            mixed.append("t=%ss %s/%s holds both modes: %s" % (t, k[0], k[1], ", ".join(g["pods"])))
        if g["gib"] > 80 and want == "never-mixed":
            sys.exit("t=%ss %s/%s: %dGi of 80Gi allocated" % (t, k[0], k[1], g["gib"]))
if want == "never-mixed":
    if mixed:
        sys.exit("\n".join(mixed))
    if not any(len(m) > 1 for m in modes_seen.values()):
        sys.exit("no GPU switched mode over the run (the scenario lost its point)")
elif not mixed:
    sys.exit("control: without groups no GPU mixed modes (the checker proves nothing)")
PY
}
"$DEVPLANE" simulate -f "$ex" -o json >"$tmp/run.json"
out=$(check_modes "$tmp/run.json" never-mixed) || fail "as written: $out"

# the story's outcomes
python3 - "$tmp/run.json" <<'PY' || fail "outcomes"
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
def want(c, msg):
    if not c: sys.exit(msg)
want(pods["default/mig-6"]["state"] == "Pending", "mig-6 should be Pending: %s" % pods["default/mig-6"])
v = pods["default/vgpu-4"]
want(v["state"] == "Running" and v["startedAt"] == 60 and v["createdAt"] == 10 and v["attempts"] >= 2,
     "vgpu-4 should wait until mig-0 and mig-1 leave at 60s: %s" % v)
want(v["devices"]["v2"] == ["gpu-0-vgpu-0"] and pods["default/mig-0"]["devices"]["v2"] == ["gpu-0-mig-0"],
     "vgpu-4 should take the GPU mig-0 and mig-1 left: %s" % v)
want([pods["default/mig-%d" % i]["devices"]["v2"] for i in range(2, 6)] == [["gpu-6-mig-%d" % j] for j in range(4)],
     "mig-2..mig-5 should fill the GPU train-5 left: %s" % [pods["default/mig-%d" % i] for i in range(2, 6)])
PY

# explain names the rejection: mig-6 arrives when only vGPU-mode memory is free
"$DEVPLANE" explain pod mig-6 -f "$ex" >"$tmp/x5" || fail "explain mig-6"
grep -q "^Pod default/mig-6: Pending" "$tmp/x5" || fail "explain mig-6: $(cat "$tmp/x5")"
grep -q "is allocated on counter set gpu-0-memory with groups \[vgpu\]; gpu-0-mig-0 has \[mig\] (incompatible compatibility groups)" "$tmp/x5" ||
        fail "explain mig-6 does not name the incompatible groups: $(cat "$tmp/x5")"

# vgpu-4 while only MIG-mode memory is free: the same input without the
# events from 60s on (and the pods they create), so it is still waiting at the end
python3 - "$ex" "$tmp/nodelete.yaml" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
cut = "  - at: 60s\n    delete: [mig-0, mig-1]\n  - at: 80s\n    delete: [train-5]\n  - at: 90s\n    create: [mig-2, mig-3, mig-4, mig-5, mig-6]\n"
assert cut in s, "the example's timeline changed"
s, n = re.subn(r"- apiVersion: v1\n  kind: Pod\n  metadata: \{name: mig-[2-6]\}\n  spec:\n(?:    .*\n)*", "", s.replace(cut, ""))
assert n == 5, "the example's pods changed"
open(sys.argv[2], "w").write(s)
PY
"$DEVPLANE" explain pod vgpu-4 -f "$tmp/nodelete.yaml" >"$tmp/x2" || fail "explain vgpu-4"
grep -q "^Pod default/vgpu-4: Pending" "$tmp/x2" || fail "vgpu-4 without the deletion: $(cat "$tmp/x2")"
grep -q "with groups \[mig\]; gpu-0-vgpu-0 has \[vgpu\] (incompatible compatibility groups)" "$tmp/x2" ||
        fail "explain vgpu-4 does not name the incompatible groups: $(cat "$tmp/x2")"
"$DEVPLANE" simulate -f "$tmp/nodelete.yaml" -o json >"$tmp/nodelete.json"
out=$(check_modes "$tmp/nodelete.json" never-mixed 2>&1) ||
        [[ "$out" == "no GPU switched mode"* ]] || fail "without the deletion: $out"

# control: the same partitions written out as ResourceSlices without groups
# (the node group switched to model v1, so the driver publishes nothing of its
# own) mix modes on one GPU
python3 - "$ex" "$tmp/nogroups.yaml" <<'PY'
import sys
s = open(sys.argv[1]).read()
opt = "    model: v2\n    dra: {compatGroups: true}\n"
assert opt in s, "the example's node group changed"
out = [s.replace(opt, "    model: v1\n")]
sel = "  nodeSelector:\n    nodeSelectorTerms:\n    - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-0]}]\n"
pool = "  pool: {name: node-0, generation: 1, resourceSliceCount: 3}\n"
out.append("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: node-0-counters}\nspec:\n"
           "  driver: gpu.example.com\n" + sel + pool + "  sharedCounters:\n" +
           "".join("  - {name: gpu-%d-memory, counters: {memory: {value: 80Gi}}}\n" % g for g in range(8)))
devs = []
for g in range(8):
    for mode, n, mem in (("mig", 4, 20), ("vgpu", 4, 20)):
        for j in range(n):
            devs.append(("gpu-%d-%s-%d" % (g, mode, j), mode, g, mem))
    devs.append(("gpu-%d" % g, "whole", g, 80))
for half in (0, 1):  # at most 64 devices with counters per slice
    out.append("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: node-0-devices-%d}\nspec:\n"
               "  driver: gpu.example.com\n" % half + sel + pool + "  devices:\n" +
               "".join("  - {name: %s, attributes: {mode: {string: %s}}, capacity: {memory: {value: %dGi}}, "
                       "consumesCounters: [{counterSet: gpu-%d-memory, counters: {memory: {value: %dGi}}}]}\n"
                       % (n, m, mem, g, mem) for n, m, g, mem in devs if g // 4 == half))
open(sys.argv[2], "w").write("".join(out))
PY
"$DEVPLANE" simulate -f "$tmp/nogroups.yaml" -o json >"$tmp/nogroups.json"
out=$(check_modes "$tmp/nogroups.json" mixed) || fail "$out"
echo "ok"
