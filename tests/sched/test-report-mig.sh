#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 23: MIG from GPU feature-discovery labels. Node objects as GFD and the
# device plugin label them (tests/sched/gen-cluster-dump.py mig: the single
# strategy, 56 x 1g.5gb and 32 x 1g.10gb on A100-40GBs; the mixed strategy,
# the GPU operator's all-balanced layout on an H100 and an A100-80GB with four
# GPUs in MIG mode beside four whole ones) are drawn as their physical GPUs,
# each divided into its MIG instances and busy where a pod holds one, instead
# of one box per instance, each instance's cell as wide as its compute slices;
# a MIG instance counts as one accelerator (as allocatable counts it), the GPU
# holding them is drawn, not counted.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 "$DP_SOURCE_DIR/tests/sched/gen-cluster-dump.py" mig >"$tmp/mig.yaml"
(cd "$tmp" && "$DEVPLANE" simulate -f mig.yaml -o json --report page.html >r.json) || fail "simulate"
# an instance failed (--fail-device NODE/UNIT): its cell is drawn unhealthy, its GPU stays in MIG mode
(cd "$tmp" && "$DEVPLANE" simulate -f mig.yaml --fail-device mig-single-a100-0/nvidia.com/gpu-20 -o json \
        --report bad.html >bad.json) || fail "simulate with a failed instance"
# explain names the instance's GPU, and says it is placed
"$DEVPLANE" explain ml/tiny-h100-0 -f "$tmp/mig.yaml" >"$tmp/x" 2>&1 || fail "explain: $(cat "$tmp/x")"
grep -q '^nvidia.com/mig-1g.10gb-0 is a MIG 1g.10gb instance on gpu-0 (GPU feature-discovery labels do not say which GPU' \
        "$tmp/x" || fail "explain does not name the instance's GPU: $(cat "$tmp/x")"
python3 - "$tmp" "$DP_SOURCE_DIR/tests/sched" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[2])
from report_page import held_cells, node_cards
d = sys.argv[1]
run = json.load(open(d + "/r.json"))["asWritten"]
nodes = {n["name"]: n for n in run["nodes"]}
cards = node_cards(open(d + "/page.html", encoding="utf-8").read())
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)

def layout(n):
    """[(GPU id, [instance profiles, '*' when held])], whole GPUs as (id, None)"""
    out = []
    for u in n["units"]:
        if u["kind"] == "gpu (MIG mode)":
            out.append((u["id"], []))
        elif out and out[-1][1] is not None and not u["kind"].startswith("nvidia.com/"):
            out[-1][1].append(u["kind"] + ("*" if u["heldBy"] else ""))
        else:
            out.append((u["id"], None))
    return out

# the document: GPUs in MIG mode holding their instances, counted as instances
want = {
    "mig-single-a100-0": (56, 10, [("gpu-%d" % g, ["1g.5gb*"] * 7 if g == 0 else ["1g.5gb*"] * 3 + ["1g.5gb"] * 4
                                    if g == 1 else ["1g.5gb"] * 7) for g in range(8)]),
    "mig-single-a100-1": (32, 5, [("gpu-%d" % g, ["1g.10gb*"] * 4 if g == 0 else ["1g.10gb*"] + ["1g.10gb"] * 3
                                   if g == 1 else ["1g.10gb"] * 4) for g in range(8)]),
    "mig-mixed-h100-0": (32, 11, [("gpu-%d" % g, ["1g.10gb*" if g < 3 else "1g.10gb", "1g.10gb", "2g.20gb",
                                                   "3g.40gb*"]) for g in range(8)]),
    "mig-mixed-a100-0": (32, 11, [("nvidia.com/gpu-%d" % g, None) for g in range(4)] +
                         [("gpu-%d" % g, ["1g.10gb*"] * (2 if g < 7 else 1) + ["1g.10gb"] * (5 if g < 7 else 6))
                          for g in range(4, 8)]),
}
for name, (devices, inuse, lay) in want.items():
    n = nodes[name]
    check((n["devices"], n["inUse"]) == (devices, inuse), "%s: %s devices, %s in use" % (name, n["devices"], n["inUse"]))
    check(layout(n) == lay, "%s: %s" % (name, layout(n)))
s = run["summary"]
check((s["devices"], s["devicesInUse"], s["utilization"]) == (152, 37, "24.3%"), "summary: %s" % s)

# the page: one box per physical GPU, the held instances drawn held inside it
for name, (devices, inuse, lay) in want.items():
    _, boxes, body = cards.get(name, (-1, [], ""))
    check(len(boxes) == len(lay), "%s: %d boxes, %d GPUs" % (name, len(boxes), len(lay)))
    check(sum(held_cells(b) for b in boxes) == inuse, "%s: %d cells held, %d in use" %
          (name, sum(held_cells(b) for b in boxes), inuse))
    for box, (gid, inst) in zip(boxes, lay):
        if inst is None:
            continue
        check(box.count('<g class="cell') == len(inst), "%s/%s: %d cells, %d instances" %
              (name, gid, box.count('<g class="cell'), len(inst)))
        check(held_cells(box) == sum(i.endswith("*") for i in inst), "%s/%s: held cells" % (name, gid))
check(">MIG 7×1g.5gb<" in cards["mig-single-a100-0"][2], "the single-strategy GPUs are not tagged MIG 7×1g.5gb")
# an instance's cell as wide as its compute slices: 1g, 1g, 2g, 3g on an all-balanced H100
w = [int(x) for x in re.findall(r'<g class="cell[^"]*"><title>[^<]*</title><rect [^>]*width="(\d+)"',
                                cards["mig-mixed-h100-0"][1][0])]
check(len(w) == 4 and w[0] == w[1] and 1.8 < w[2] / w[0] < 2.2 and 2.7 < w[3] / w[0] < 3.3, "cell widths %s" % w)
check(">MIG 4×1g.10gb<" in cards["mig-single-a100-1"][2], "four 1g.10gb to an A100-40GB")

# a failed instance: unhealthy, not counted healthy, its GPU drawn with it
b = {n["name"]: n for n in json.load(open(d + "/bad.json"))["asWritten"]["nodes"]}["mig-single-a100-0"]
units = {u["id"]: u for u in b["units"]}
check(units["nvidia.com/gpu-20"]["health"] == "Unhealthy" and b["healthy"] == 55, "the failed instance: %s" % b["healthy"])
bcards = node_cards(open(d + "/bad.html", encoding="utf-8").read())
check(bcards["mig-single-a100-0"][1][2].count('<g class="cell unhealthy">') == 1, "the failed instance's cell")
if bad:
    print("FAIL", *bad, sep="\n  ")
    sys.exit(1)
print("ok: %d MIG nodes, %s devices, utilization %s" % (len(want), s["devices"], s["utilization"]))
PY
