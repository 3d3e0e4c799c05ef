#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# devplane simulate --report stays readable from a small example to 1,000
# nodes and 10,000 pods, and with names of 60+ characters (issue 12): in
# headless Chromium (Debian's chromium, installed by scripts/bootstrap; the
# test fails without it) a script added to a copy of the page measures the
# layout and writes what it found into the DOM: no box overflows its
# container and the page does not scroll sideways, the first node is in the
# first screen, a device's id and tag do not overlap, the small fleet
# pictures' node names fit their column, two nodes never read the same, the
# filter box hides what does not match. At 1,000 nodes the page is under
# 10 MB, every node is drawn or folded, pods are coloured by workload (the legend has
# a line per workload, not per pod) and Pending pods come in a few groups
# with every node's reason one click away. A cluster dump (no Fleet) is
# headed "Cluster", and its pods' owners are their workloads. Issue 23: on
# every page the overview is in the first screen with each node's square
# shaded as its accelerators are held, and each node card draws as many
# devices held as the node has in use; a 1,000-node kubectl dump
# (gen-cluster-dump.py big) counts its GPUs only, and its screenshot's
# pixels show every busy node busy. At 1,000 nodes nodes alike are folded
# into one card (each like it, a link to one opens its list) and the page is
# at most 40,000 px tall (12,000 for the kubectl dump; both about 236,000
# before).
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || fail "chromium is not installed (scripts/bootstrap installs Debian's chromium); this test needs it"

# what the page must satisfy, measured where Chromium laid it out
cat >"$tmp/layout.js" <<'JS'
(function () {
  var errs = [], W = innerWidth, H = innerHeight, t0 = performance.now();
  function R(e) { return e.getBoundingClientRect(); }
  function who(e) {
    return e.getAttribute("data-node") || e.getAttribute("data-pod") || e.getAttribute("title") ||
      (e.tagName + "." + e.className);
  }
  if (document.documentElement.scrollWidth > W + 1)
    errs.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + W);
  var nodes = document.querySelectorAll(".node");
  if (!nodes.length) errs.push("no node drawn");
  else if (R(nodes[0]).top < 0 || R(nodes[0]).top > H - 60)
    errs.push("the first node starts at " + Math.round(R(nodes[0]).top) + " px, not in the first screen of " + H);
  // boxes inside their containers, and no content spilling out of a box that does not scroll
  var boxes = ".node, .node h3, .node .meta, .nm, .legend, .legend .item, .pgroup, .pgroup .pod, .pgroup p, " +
    ".side .col, .minibox, .clegend, header h1, .stat, table.cmp, .unhealthy-list, ol.events li";
  document.querySelectorAll(boxes).forEach(function (e) {
    var re = R(e), p = e.parentElement, rp = R(p);
    if (re.width === 0 || getComputedStyle(p).overflowX !== "visible" && p.scrollWidth > p.clientWidth) return;
    if (re.right > rp.right + 1 || re.left < rp.left - 1)
      errs.push(who(e) + " overflows its container (" + Math.round(re.left) + ".." + Math.round(re.right) +
        " in " + Math.round(rp.left) + ".." + Math.round(rp.right) + ")");
    var cs = getComputedStyle(e);
    if (cs.overflowX === "visible" && e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
      errs.push(who(e) + " spills its content (" + e.scrollWidth + " > " + e.clientWidth + ")");
  });
  // a name cut with an ellipsis still shows some of its head
  document.querySelectorAll(".nm .h").forEach(function (h) {
    if (h.scrollWidth > h.clientWidth + 1 && h.clientWidth < 24 && R(h).width >= 0 && h.offsetParent)
      errs.push("a name is cut to nothing: " + h.parentElement.getAttribute("title"));
  });
  // in each device box: the id left of the tag, both inside the box
  document.querySelectorAll("g.dev").forEach(function (g) {
    var box = g.querySelector("rect.box").getBBox(), id = g.querySelector("text.id").getBBox(),
      tag = g.querySelector("text.tag");
    if (id.x + id.width > box.x + box.width) errs.push(g.getAttribute("data-device") + ": the id leaves its box");
    if (tag && id.x + id.width > tag.getBBox().x)
      errs.push(g.getAttribute("data-device") + ": the id runs into its tag");
  });
  // the small fleet pictures: names fit left of the squares, no two alike
  document.querySelectorAll("svg.mini").forEach(function (svg) {
    var seen = {};
    svg.querySelectorAll("g").forEach(function (row) {
      var t = row.querySelector("text"), r = row.querySelector("rect");
      if (!t) return;
      var label = t.lastChild.textContent;
      if (r && t.getComputedTextLength() > +r.getAttribute("x"))
        errs.push("small picture: node label " + label + " runs into its squares");
      if (seen[label]) errs.push("small picture: two nodes read " + label);
      seen[label] = 1;
    });
  });
  // node cards: what shows of each name (the cut head's visible part, the tail) is unique
  var shown = {};
  document.querySelectorAll(".node h3 .nm").forEach(function (nm) {
    var h = nm.querySelector(".h"), t = nm.querySelector(".t"), text = h.textContent;
    if (h.scrollWidth > h.clientWidth + 1)
      text = text.slice(0, Math.floor(text.length * h.clientWidth / h.scrollWidth) - 1) + "…";
    text += t ? t.textContent : "";
    if (shown[text]) errs.push("two nodes read the same: " + text);
    shown[text] = 1;
  });
  // the filter box: the last node's name keeps that node and hides nodes without it
  var q = document.getElementById("q"), last = nodes[nodes.length - 1];
  if (!q) errs.push("no filter box");
  else if (last) {
    var name = last.getAttribute("data-node");
    q.value = name;
    q.dispatchEvent(new Event("input"));
    var visible = 0;
    nodes.forEach(function (n) {
      if (n.hidden) return;
      visible++;
      if (n.textContent.toLowerCase().indexOf(name.toLowerCase()) < 0) errs.push("filter kept " + who(n));
    });
    if (last.hidden) errs.push("filter hid the node it names");
    if (nodes.length > 1 && visible === nodes.length) errs.push("filter hid nothing");
    q.value = "";
    q.dispatchEvent(new Event("input"));
    nodes.forEach(function (n) { if (n.hidden) errs.push("cleared filter left " + who(n) + " hidden"); });
  }
  // the overview (issue 23): in the first screen, each node's square shaded as its accelerators are held
  var ov = document.getElementById("overview"), squares = [];
  if (nodes.length && !ov) errs.push("no overview");
  else if (ov && R(ov).bottom > H)
    errs.push("the overview ends at " + Math.round(R(ov).bottom) + " px, below the first screen of " + H);
  var WHITE = "rgb(255, 255, 255)", FULL = "rgb(8, 48, 107)";
  document.querySelectorAll("svg.heat rect").forEach(function (r) {
    var u = r.getAttribute("data-use").split("/"), used = +u[0], total = +u[1], fill = getComputedStyle(r).fill,
      b = R(r), name = r.getAttribute("data-node");
    if (used > 0 && (fill === WHITE || r.classList.contains("hx"))) errs.push("overview: " + name + " is busy, drawn idle");
    if (total > 0 && used >= total && fill !== FULL) errs.push("overview: " + name + " is full, drawn " + fill);
    if (total > 0 && used === 0 && fill !== WHITE) errs.push("overview: " + name + " is idle, drawn " + fill);
    squares.push([name, Math.round(b.left + b.width / 2), Math.round(b.top + b.height / 2), used, total]);
  });
  // node cards: as many device boxes drawn held as the node has accelerators in use (MIG cards count instances)
  nodes.forEach(function (n) {
    var mig = false, held = 0;
    n.querySelectorAll("text.tag").forEach(function (t) { mig = mig || /^MIG/.test(t.textContent); });
    if (mig) return;
    n.querySelectorAll("g.dev").forEach(function (g) {
      if (g.querySelector('rect[class^="w"], rect[fill="#8a8f98"]')) held++;
    });
    if (held !== +n.getAttribute("data-inuse"))
      errs.push(who(n) + ": " + held + " devices drawn held, " + n.getAttribute("data-inuse") + " in use");
  });
  // a folded node (issue 23): a link to it ("#n-<index>", as the overview's squares) opens its card's list
  var folded = document.querySelector(".like-n");
  if (folded) {
    history.replaceState(null, "", "#" + folded.id);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
    if (!(R(folded).height > 0)) errs.push("a link to folded node " + folded.id + " does not show it");
    folded.closest("details").open = false;
    history.replaceState(null, "", "#");
    scrollTo(0, 0);
  }
  var sqout = document.createElement("pre");
  sqout.id = "overview-squares";
  sqout.textContent = JSON.stringify(squares);
  document.body.appendChild(sqout);
  var out = document.createElement("pre");
  out.id = "layout-result";
  out.textContent = (errs.length ? "LAYOUT FAIL\n" + errs.slice(0, 30).join("\n") : "LAYOUT OK") +
    "\nnodes=" + nodes.length + " height=" + document.documentElement.scrollHeight + " loaded_ms=" + Math.round(t0) + " checked_ms=" + Math.round(performance.now() - t0);
  document.body.appendChild(out);
})();
JS

layout() { # layout PAGE.html NAME: the checks above in Chromium; prints the result line
        local page=$1 b=$2 prof
        prof=$(mktemp -d "$tmp/profile.XXXXXX")
        { sed '$d' "$page"; printf '<script>\n'; cat "$tmp/layout.js"; printf '</script>\n</body></html>\n'; } \
                >"$tmp/$b.check.html"
        tail -1 "$page" | grep -q '^</body></html>$' || fail "$b: the page does not end with </body></html>"
        local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
                --disable-background-networking --disable-component-update --disable-sync
                --user-data-dir="$prof" --window-size=1400,1000)
        local t0 t1
        t0=$(date +%s%N)
        "$chrome" "${flags[@]}" --dump-dom "file://$tmp/$b.check.html" >"$tmp/$b.dom" 2>"$tmp/chrome.err" ||
                fail "$b: chromium --dump-dom: $(tail -5 "$tmp/chrome.err")"
        t1=$(date +%s%N)
        "$chrome" "${flags[@]}" --screenshot="$tmp/$b.png" "file://$page" >/dev/null 2>>"$tmp/chrome.err" ||
                fail "$b: chromium --screenshot: $(tail -5 "$tmp/chrome.err")"
        local size
        size=$(stat -c %s "$tmp/$b.png")
        [ "$size" -gt 20000 ] || fail "$b: the screenshot is only $size bytes"
        python3 - "$tmp/$b.dom" "$b" "$(((t1 - t0) / 1000000))" <<'PY'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="layout-result">(.*?)</pre>', dom, re.S)
if not m:
    sys.exit("%s: the layout script left no result (did it run?)" % sys.argv[2])
res = html.unescape(m.group(1))
if not res.startswith("LAYOUT OK"):
    sys.exit("%s: %s" % (sys.argv[2], res))
print("%s: %s chromium_ms=%s" % (sys.argv[2], res.split("\n")[-1], sys.argv[3]))
PY
}

# small: the seed example
"$DEVPLANE" simulate -f "$DP_SOURCE_DIR/examples/seed.yaml" --report "$tmp/seed.html" >/dev/null || fail "seed: simulate"
out=$(layout "$tmp/seed.html" seed) || fail "$out"
echo "$out"

# long names: nodes, workloads and pods of 60+ characters sharing long prefixes
# and nodes of one device (a narrow card): a DeviceProfile file beside the input
sed -e 's/^  name: example-gpu$/  name: one-gpu/' -e 's/^  - count: 8$/  - count: 1/' \
        "$DP_SOURCE_DIR/profiles/example-gpu.yaml" >"$tmp/one-gpu.yaml"
grep -q '^  - count: 1$' "$tmp/one-gpu.yaml" || fail "long: profiles/example-gpu.yaml changed shape"
python3 "$DP_SOURCE_DIR/tests/sched/gen-fleet.py" 24 240 --long-names --small-profile=one-gpu.yaml >"$tmp/long.yaml"
"$DEVPLANE" simulate -f "$tmp/long.yaml" -o json --report "$tmp/long.html" >"$tmp/long.json" || fail "long: simulate"
python3 - "$tmp/long.json" <<'PY' || fail "long names: the input is not what this test needs"
import json, sys
run = json.load(open(sys.argv[1]))["asWritten"]
assert min(len(n["name"]) for n in run["nodes"]) >= 60, "node names under 60 characters"
assert min(len(p["name"]) for p in run["pods"]) >= 60, "pod names under 60 characters"
assert any(p["state"] == "Pending" for p in run["pods"]), "no Pending pod"
assert sum(n["devices"] == 1 for n in run["nodes"]) == 4, "no nodes of one device"
PY
out=$(layout "$tmp/long.html" long) || fail "$out"
echo "$out"

# 1,000 nodes, 10,000 pods
python3 "$DP_SOURCE_DIR/tests/sched/gen-fleet.py" 1000 10000 >"$tmp/big.yaml"
t0=$(date +%s%N)
"$DEVPLANE" simulate -f "$tmp/big.yaml" -o json --report "$tmp/big.html" >"$tmp/big.json" || fail "big: simulate"
t1=$(date +%s%N)
size=$(stat -c %s "$tmp/big.html")
[ "$size" -lt 10000000 ] || fail "big: the page is $size bytes, not under 10 MB"
out=$(layout "$tmp/big.html" big) || fail "$out"
echo "$out page_bytes=$size simulate_ms=$(((t1 - t0) / 1000000))"
# issue 23: the page's length (237,375 px before the node cards were folded and the events scrolled)
height=$(sed -n 's/.* height=\([0-9]*\) .*/\1/p' <<<"$out")
[ -n "$height" ] && [ "$height" -le 40000 ] || fail "big: the page is ${height:-?} px tall, not at most 40,000"
python3 - "$tmp/big.json" "$tmp/big.html" <<'PY' || fail "big: the page"
import html, json, re, sys
rep = json.load(open(sys.argv[1]))
run = rep["asWritten"]
page = open(sys.argv[2], encoding="utf-8").read()
assert len(run["nodes"]) == 1000 and len(run["pods"]) == 10000, "not the input generated"
drawn = re.findall(r'<div class="node f"[^>]*? data-node="([^"]*)"', page)
folded = re.findall(r'<span class="like-n f" id="n-\d+" data-node="([^"]*)"', page)
assert sorted(drawn + folded) == sorted(n["name"] for n in run["nodes"]), \
    "not every node drawn or folded once (%d + %d)" % (len(drawn), len(folded))
assert drawn == [n["name"] for n in run["nodes"] if n["name"] in set(drawn)], "the cards are not in order"
legend = page[page.index('<div class="legend"'):page.index("</div>", page.index('<div class="legend"'))]
items = re.findall(r'data-workload="(\d+)"', legend)
assert 20 < len(items) < 1000, "the legend has %d entries: not one per workload" % len(items)
assert "Deployment default/deployment-0" in html.unescape(legend), "no Deployment in the legend"
colours = set(re.findall(r"\.w\d+\{background:(hsl\([^)]*\))", page))
assert len(colours) == len(items), "%d workloads, %d distinct colours" % (len(items), len(colours))
pending = [p for p in run["pods"] if p["state"] == "Pending"]
groups = re.findall(r'<div class="pgroup f pending">', page)
reasons = {p["reason"] for p in pending}
assert pending and len(groups) == len(reasons), "%d Pending reasons, %d groups" % (len(reasons), len(groups))
assert len(groups) < 50, "%d groups of Pending pods" % len(groups)
# every node's reason for the first groups: explain's per-node lines, one per node that said no
whys = re.findall(r'<pre class="why">(.*?)</pre>', page, re.S)
assert whys and "Per node (resources short first):" in whys[0], "no per-node reasons"
first = html.unescape(whys[0])
assert len(re.findall(r"^  \S+: ", first.split("Per node")[1], re.M)) >= 900, "per-node reasons missing nodes"
assert page.count("<script") == 1 and not re.search(r"(src|href)=\"(https?:|//)", page), "scripts or external resources"
PY

# issue 23: a kubectl dump of 1,000 nodes (600 device-plugin nodes with GPU
# feature-discovery labels and NICs, 300 DRA nodes, 100 CPU nodes) and 10,000
# pods, most of them running where the dump binds them: every busy node is
# drawn busy (in the overview's squares, read back from the screenshot's
# pixels, and in the node cards), utilization counts the GPUs only, and the
# overview is in the first screen
python3 "$DP_SOURCE_DIR/tests/sched/gen-cluster-dump.py" big 1000 10000 >"$tmp/bigc.yaml"
t0=$(date +%s%N)
"$DEVPLANE" simulate -f "$tmp/bigc.yaml" -o json --report "$tmp/bigc.html" >"$tmp/bigc.json" || fail "bigc: simulate"
t1=$(date +%s%N)
size=$(stat -c %s "$tmp/bigc.html")
[ "$size" -lt 10000000 ] || fail "bigc: the page is $size bytes, not under 10 MB"
out=$(layout "$tmp/bigc.html" bigc) || fail "$out"
echo "$out page_bytes=$size simulate_ms=$(((t1 - t0) / 1000000))"
# the page's length: 235,142 px before the node cards were folded and the events scrolled
height=$(sed -n 's/.* height=\([0-9]*\) .*/\1/p' <<<"$out")
[ -n "$height" ] && [ "$height" -le 12000 ] || fail "bigc: the page is ${height:-?} px tall, not at most 12,000"
python3 - "$tmp/bigc.json" "$tmp/bigc.html" "$tmp/bigc.dom" "$tmp/bigc.png" "$DP_SOURCE_DIR/tests/sched" <<'PY' || fail "bigc: the overview"
import html, json, re, struct, sys, zlib
sys.path.insert(0, sys.argv[5])
from report_page import folded_into, node_cards
rep = json.load(open(sys.argv[1]))
run = rep["asWritten"]
page = open(sys.argv[2], encoding="utf-8").read()
nodes = {n["name"]: n for n in run["nodes"]}
# folded nodes (issue 23): each like the card it is folded into, most of them folded
cards = node_cards(page)
n_folded = 0
for card, (_, _, body) in cards.items():
    for name in folded_into(body):
        a, b = nodes[card], nodes[name]
        same = [k for k in ("pool", "model", "devices", "healthy", "inUse", "otherDevices") if a.get(k) != b.get(k)]
        assert not same, "%s folded into %s: %s differ" % (name, card, same)
        assert a["inUse"] in (0, a["devices"]), "%s: a partly used node folded" % name
        n_folded += 1
assert n_folded + len(cards) == 1000 and n_folded >= 900, "%d cards, %d folded" % (len(cards), n_folded)
assert len(nodes) == 1000 and len(run["pods"]) == 10000, "not the input generated"
# accelerators only: 8 GPUs on each of 900 nodes; every device-plugin GPU and 1,600 DRA GPUs held by running pods
s = run["summary"]
v1 = [n for n in nodes.values() if n["model"] == "v1"]
v2 = [n for n in nodes.values() if n["model"] == "v2"]
cpu = [n for n in nodes.values() if n["model"] == "cpu"]
assert (len(v1), len(v2), len(cpu)) == (600, 300, 100), "models: %d %d %d" % (len(v1), len(v2), len(cpu))
assert s["devices"] == 7200, "%s devices counted, not the 7,200 GPUs" % s["devices"]
assert all(n["inUse"] == n["devices"] == 8 for n in v1), "a device-plugin node's GPUs are not all in use"
in_use = sum(n["inUse"] for n in nodes.values())
assert s["devicesInUse"] == in_use and in_use >= 4800 + 1600, "in use: %s, %d" % (s["devicesInUse"], in_use)
assert s["utilization"] == "%d.%d%%" % (in_use * 100 // 7200, in_use * 1000 // 7200 % 10), s["utilization"]
assert any(n["inUse"] == 0 for n in v2) and any(0 < n["inUse"] < 8 for n in v2), "no idle or partly used DRA node"
# the overview's squares as the nodes are used, and where the screenshot shows them
dom = open(sys.argv[3], encoding="utf-8").read()
sq = json.loads(html.unescape(re.search(r'<pre id="overview-squares">(.*?)</pre>', dom, re.S).group(1)))
assert {q[0] for q in sq} == set(nodes), "%d squares for %d nodes" % (len(sq), len(nodes))
for name, x, y, used, total in sq:
    n = nodes[name]
    assert (used, total) == (n["inUse"], n["healthy"]), "%s: square %d/%d, node %d/%d" % (name, used, total, n["inUse"], n["healthy"])

def png_rows(path, upto):
    """The first `upto` rows of an 8-bit RGB(A) PNG as lists of pixel tuples."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        ln, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + ln]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, "PNG kind %d/%d" % (depth, ctype)
            bpp = 4 if ctype == 6 else 3
        elif typ == b"IDAT":
            idat += body
        pos += 12 + ln
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(min(upto, h)):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[k:k + 3]) for k in range(0, stride, bpp)])
        prev = line
    return rows

rows = png_rows(sys.argv[4], 1000)
seen = {"busy": 0, "idle": 0, "none": 0}
for name, x, y, used, total in sq:
    if y >= len(rows) or x >= len(rows[0]):
        raise AssertionError("the square of %s is not in the first screen (%d, %d)" % (name, x, y))
    r, g, b = rows[y][x]
    if total == 0:
        seen["none"] += 1
        continue
    if used >= total:
        assert r < 60 and g < 90 and b > 80, "%s: all in use, the screenshot shows rgb%s" % (name, (r, g, b))
        seen["busy"] += 1
    elif used:
        assert (r, g, b) != (255, 255, 255) and b > r, "%s: busy, the screenshot shows rgb%s" % (name, (r, g, b))
        seen["busy"] += 1
    else:
        assert min(r, g, b) > 240, "%s: idle, the screenshot shows rgb%s" % (name, (r, g, b))
        seen["idle"] += 1
assert seen["busy"] == sum(1 for n in nodes.values() if n["inUse"]), seen
print("bigc: %d busy, %d idle, %d CPU nodes read back from the screenshot; utilization %s" %
      (seen["busy"], seen["idle"], seen["none"], s["utilization"]))
PY

# a cluster dump (Node objects, no Fleet): "Cluster", and a ReplicaSet's pods are one workload
cat >"$tmp/dump.yaml" <<'YAML'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: gpu-node-0, labels: {kubernetes.io/hostname: gpu-node-0}}
  status:
    capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "4"}
    allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "4"}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-7d4b9c-a1
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c, uid: u1, controller: true}]
  spec:
    containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-7d4b9c-b2
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c, uid: u1, controller: true}]
  spec:
    containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: lone}
  spec:
    containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
YAML
"$DEVPLANE" simulate -f "$tmp/dump.yaml" --report "$tmp/dump.html" >/dev/null || fail "dump: simulate"
grep -q '<h1>Cluster ' "$tmp/dump.html" || fail "dump: the header does not say Cluster"
! grep -q '<h1>Fleet ' "$tmp/dump.html" || fail "dump: the header says Fleet"
[ "$(grep -o 'data-workload="[0-9]*"' "$tmp/dump.html" | wc -l)" -eq 2 ] || fail "dump: not two workloads in the legend"
grep -q 'title="ReplicaSet default/web-7d4b9c"' "$tmp/dump.html" || fail "dump: the ReplicaSet is not a workload"
grep -q 'title="Pod default/lone"' "$tmp/dump.html" || fail "dump: the unowned pod is not its own workload"
grep -q '<h1>Fleet ' "$tmp/seed.html" || fail "seed: the header does not say Fleet"
echo "ok"
