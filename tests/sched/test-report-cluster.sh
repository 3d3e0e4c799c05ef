#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 23: the report of a cluster dump shaped like the issue threads'
# (tests/sched/gen-cluster-dump.py issue: AKS device-plugin nodes with GPU
# feature-discovery labels, a time-sliced T4 node, a kwok DGX node with NICs
# and RDMA, AKS DRA nodes, CPU nodes, Deployments' pods under ReplicaSets)
# draws what the cluster holds and counts what it should:
#   1. every held GPU of a Node object is drawn held, one box per GPU;
#   2. utilization counts accelerators only (NICs, RDMA shares apart; the
#      rule of docs/report.md, one node per vendor's resource name);
#   3. a time-sliced node is its GPUs (gpu.count) of gpu.replicas shares;
#   4. CPU-only nodes are "cpu", the page is titled by the input, and a
#      Deployment's pods are the Deployment (by its ReplicaSet, or by the
#      pods' pod-template-hash when the dump has no ReplicaSet);
#   5. pods bound in the input keep their devices when new pods are added;
#   6. an overview at the top: a row per pool and a square per node.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
gen="$DP_SOURCE_DIR/tests/sched/gen-cluster-dump.py"

python3 "$gen" issue >"$tmp/issue.yaml"
python3 "$gen" --new-pods 4 >"$tmp/new.yaml"
(cd "$tmp" && "$DEVPLANE" simulate -f issue.yaml -o json --report page.html >r.json) || fail "simulate"
(cd "$tmp" && "$DEVPLANE" simulate -f issue.yaml -f new.yaml -o json >r2.json) || fail "simulate with new pods"
(cd "$tmp" && "$DEVPLANE" simulate -f issue.yaml -o json --report page2.html >r3.json) || fail "simulate again"
cmp -s "$tmp/page.html" "$tmp/page2.html" && cmp -s "$tmp/r.json" "$tmp/r3.json" || fail "two runs differ"
# the dump as `kubectl get nodes,pods` gives it, without the owners: the pods'
# pod-template-hash says their Deployment
python3 - "$tmp/issue.yaml" "$tmp/norc.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read().split("\n- ")
kept = [t for t in text if t.split("\n", 2)[1:2] not in (["  kind: ReplicaSet"], ["  kind: Deployment"])]
assert len(kept) < len(text), "no owner in the dump"
open(sys.argv[2], "w").write("\n- ".join(kept))
PY
(cd "$tmp" && "$DEVPLANE" simulate -f norc.yaml --report norc.html >/dev/null) || fail "simulate without owners"
# explain names the time-sliced GPU's other holder (replicas 0 and 4 of nvidia.com/gpu are gpu-0's)
"$DEVPLANE" explain notebooks/jupyter-7f5d8c6b9-bbbbb -f "$tmp/issue.yaml" >"$tmp/x" 2>&1 || fail "explain: $(cat "$tmp/x")"
grep -q 'gpu-0 is shared (time-slicing): also held by notebooks/jupyter-7f5d8c6b9-gbbbb' "$tmp/x" ||
        fail "explain does not say gpu-0 is time-sliced: $(cat "$tmp/x")"

# a time-sliced node whose allocatable dropped one GPU's replicas (an unhealthy GPU): 3 GPUs x 10
python3 - "$tmp/issue.yaml" "$tmp/ts30.yaml" <<'PY'
import sys
t = open(sys.argv[1]).read()
cap = t.index('nvidia.com/gpu: "40"')
al = t.index('nvidia.com/gpu: "40"', cap + 1)
open(sys.argv[2], "w").write(t[:al] + 'nvidia.com/gpu: "30"' + t[al + len('nvidia.com/gpu: "40"'):])
PY
"$DEVPLANE" simulate -f "$tmp/ts30.yaml" -o json >"$tmp/ts30.json" || fail "simulate ts30"
python3 - "$tmp/ts30.json" <<'PY' || fail "a time-sliced node short of a GPU"
import json, sys
n = [n for n in json.load(open(sys.argv[1]))["asWritten"]["nodes"] if n["name"] == "gpu-ts-t4-0"][0]
assert n["devices"] == 3 and [u.get("replicas") for u in n["units"]] == [10] * 3, n["units"]
PY

# the accelerator rule (docs/report.md), one node per vendor's resource names
{
        echo "apiVersion: v1"
        echo "kind: List"
        echo "items:"
        i=0
        for res in nvidia.com/gpu nvidia.com/gpu.shared nvidia.com/mig-1g.10gb amd.com/gpu gpu.intel.com/i915 \
                gpu.intel.com/xe google.com/tpu habana.ai/gaudi aws.amazon.com/neuron aws.amazon.com/neuroncore \
                gpu.intel.com/millicores gpu.intel.com/memory.max nvidia.com/hostdev rdma/rdma_shared_device_a \
                intel.com/sriov_netdevice openshift.io/mlxnics xilinx.com/fpga-xilinx_u200; do
                cat <<EOF
- apiVersion: v1
  kind: Node
  metadata: {name: n$i, labels: {kubernetes.io/hostname: n$i}}
  status:
    allocatable: {cpu: "8", memory: 64Gi, pods: "110", $res: "2"}
EOF
                i=$((i + 1))
        done
} >"$tmp/rule.yaml"
"$DEVPLANE" simulate -f "$tmp/rule.yaml" -o json >"$tmp/rule.json" || fail "simulate the rule's nodes"
python3 - "$tmp/rule.json" <<'PY' || fail "the accelerator rule"
import json, sys
nodes = json.load(open(sys.argv[1]))["asWritten"]["nodes"]
got = ["%s:%d" % (n["name"], n["devices"]) for n in nodes]
want = ["n%d:%d" % (i, 2 if i < 10 else 0) for i in range(17)]
assert got == want, "accelerators per node: %s" % got
assert all(len(n.get("otherDevices", [])) == (i >= 10) for i, n in enumerate(nodes)), "otherDevices"
PY

python3 - "$tmp" "$DP_SOURCE_DIR/tests/sched" <<'PY'
import html, json, re, sys
sys.path.insert(0, sys.argv[2])
from report_page import node_cards
d = sys.argv[1]
rep = json.load(open(d + "/r.json"))
run = rep["asWritten"]
nodes = {n["name"]: n for n in run["nodes"]}
page = open(d + "/page.html", encoding="utf-8").read()
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)

# the node cards, each with its device boxes
cards = node_cards(page)
for name in nodes:
    cards.setdefault(name, (-1, [], ""))
check(set(cards) == set(nodes), "node cards %s, nodes %s" % (sorted(cards), sorted(nodes)))

# 1. every held GPU drawn held: one box per GPU, coloured by its holder's workload
full = "aks-gpunp-28745190-vmss000000"
for name, (inuse, devs, body) in sorted(cards.items()):
    if name not in nodes:
        continue
    held = sum(1 for g in devs if re.search(r'<rect [^>]*class="w\d+"', g))
    check(held == nodes[name]["inUse"] == inuse, "%s: %d boxes drawn held, %d in use" % (name, held, nodes[name]["inUse"]))
    check(len(devs) == nodes[name]["devices"], "%s: %d boxes, %d accelerators" % (name, len(devs), nodes[name]["devices"]))
check(nodes[full]["inUse"] == 8 and len(cards[full][1]) == 8, "%s: its 8 held GPUs" % full)
check("free" not in "".join(cards[full][1]), "%s: a held GPU drawn free" % full)

# 2. accelerators only: 8 + 8 + 4 + 8 + 2 + 2 GPUs; NICs and RDMA apart
s = run["summary"]
check((s["devices"], s["devicesInUse"], s["utilization"]) == (32, 24, "75.0%"),
      "summary: %s devices, %s in use, %s" % (s["devices"], s["devicesInUse"], s["utilization"]))
dgx = nodes["kwok-dgx-h100-0"]
check(dgx["devices"] == 8 and {o["name"]: (o["inUse"], o["total"]) for o in dgx.get("otherDevices", [])} ==
      {"nvidia.com/hostdev": (8, 8), "rdma/hca_shared_devices_a": (1, 1000)},
      "kwok DGX: %s devices, others %s" % (dgx["devices"], dgx.get("otherDevices")))
check(nodes["aks-gpunp-28745190-vmss000001"]["devices"] == 8, "RDMA shares counted as devices")
check("rdma/hca_shared_devices_a 3/1000 in use" in page, "the page does not list the RDMA shares apart")

# 3. time-sliced: 4 GPUs x 10 replicas (GFD labels), 6 notebooks on 4 GPUs
ts = nodes["gpu-ts-t4-0"]
check(ts["devices"] == 4 and ts["inUse"] == 4, "time-sliced node: %s devices, %s in use" % (ts["devices"], ts["inUse"]))
check([u.get("replicas") for u in ts["units"]] == [10] * 4, "replicas: %s" % [u.get("replicas") for u in ts["units"]][:8])
held = sorted(x["heldBy"] for u in ts["units"] for x in u.get("shares", []) if x["heldBy"])
check(len(held) == 6 and all(h.startswith("notebooks/jupyter-") for h in held), "shares held: %s" % held)
tsdevs = cards["gpu-ts-t4-0"][1]
check(len(tsdevs) == 4 and all(g.count('<g class="cell') == 10 and ">time-sliced<" in g for g in tsdevs),
      "the time-sliced node is not drawn as 4 GPUs of 10 shares")
check("time-sliced ×10" in cards["gpu-ts-t4-0"][2], "the card does not say time-sliced ×10")

# 4. labels: CPU nodes, the title, Deployments
check(nodes["aks-system-17350482-vmss000000"]["model"] == "cpu", "a CPU node's model is %r" % nodes["aks-system-17350482-vmss000000"]["model"])
check(nodes["aks-gpudra-41093712-vmss000000"]["model"] == "v2", "the DRA node's model")
check(re.search(r"<h1>Cluster issue\.yaml</h1>", page), "title: %s" % re.search(r"<h1>.*?</h1>", page).group(0))
check('<span class="badge cpu">CPU</span>' in cards["aks-cpunp-17350482-vmss000000"][2], "no CPU badge")
legend = re.findall(r'<span class="nm wl" title="([^"]*)"', page)
for want in ("Deployment ml/train", "Deployment ml/infer", "Deployment notebooks/jupyter", "Deployment web/frontend"):
    check(want in legend, "legend has no %s: %s" % (want, legend))
check(not any(l.startswith("ReplicaSet") for l in legend), "legend lists ReplicaSets: %s" % legend)
norc = re.findall(r'<span class="nm wl" title="([^"]*)"', open(d + "/norc.html", encoding="utf-8").read())
check("Deployment web/frontend" in norc and not any(l.startswith("ReplicaSet") for l in norc),
      "without owners, pod-template-hash does not fold: %s" % norc)

# 5. pods bound in the input keep their devices when new pods come
run2 = {p["name"]: p for p in json.load(open(d + "/r2.json"))["asWritten"]["pods"]}
for p in run["pods"]:
    q = run2[p["name"]]
    check(p["devices"] == q["devices"] and p.get("node") == q.get("node"),
          "%s moved: %s -> %s" % (p["name"], p["devices"], q["devices"]))
sweep = [p for n, p in run2.items() if n.startswith("ml/sweep-")]
check(len(sweep) == 4 and all(p["state"] == "Running" and p["node"] == "aks-gpunp-28745190-vmss000001" for p in sweep),
      "the new pods: %s" % [(p["name"], p["state"], p.get("node")) for p in sweep])

# 6. the overview: before the node cards, a row per pool, a square per node as used
ov = page.find('<section class="overview"')
check(0 < ov < page.find('<div class="node f"'), "no overview before the node cards")
rows = re.findall(r'<td class="pn"><span class="pname" title="([^"]*)"', page)
check(rows == ["gpunp", "t4-shared", "NVIDIA-H100-80GB-HBM3", "gpudra", "system", "cpunp"], "pools: %s" % rows)
sq = {html.unescape(a): (c, u) for c, a, u in re.findall(r'<rect [^>]*class="(h[x0-4])[^"]*" data-node="([^"]*)" data-use="([^"]*)"', page)}
check(set(sq) == set(nodes), "overview squares: %s" % sorted(sq))
for name, n in nodes.items():
    c, u = sq.get(name, ("", ""))
    if not sq:
        break
    want = "hx" if not n["devices"] else "h0" if not n["inUse"] else "h4" if n["inUse"] >= n["healthy"] else c
    check(c == want and u == "%d/%d" % (n["inUse"], n["healthy"]), "overview %s: %s %s" % (name, c, u))
if bad:
    print("FAIL", *bad, sep="\n  ")
    sys.exit(1)
print("ok: %d nodes, %d cards, utilization %s" % (len(nodes), len(cards), s["utilization"]))
PY
