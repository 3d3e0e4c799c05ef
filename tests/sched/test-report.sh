#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# devplane simulate --report: the HTML page rendered by headless Chromium
# (Debian's chromium, installed by scripts/bootstrap) holds what the input
# holds: every node, every pod, the failed device marked, each Pending
# reason with its pods, every event; one inline script (the filter box) and
# no external resource; a screenshot is not blank; the bytes are the same on
# every run; strings from input are escaped; a bad path is a clear error
# with exit 2.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || fail "chromium is not installed (scripts/bootstrap installs Debian's chromium); this test needs it"

render() { # render FILE.html OUT.dom OUT.png
        local prof
        prof=$(mktemp -d "$tmp/profile.XXXXXX")
        local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
                --disable-background-networking --disable-component-update --disable-sync
                --user-data-dir="$prof" --window-size=1400,1800)
        "$chrome" "${flags[@]}" --dump-dom "file://$1" >"$2" 2>"$tmp/chrome.err" ||
                fail "chromium --dump-dom $1: $(tail -5 "$tmp/chrome.err")"
        "$chrome" "${flags[@]}" --screenshot="$3" "file://$1" >/dev/null 2>>"$tmp/chrome.err" ||
                fail "chromium --screenshot $1: $(tail -5 "$tmp/chrome.err")"
        [ -s "$2" ] || fail "chromium --dump-dom $1: empty DOM"
        [ -s "$3" ] || fail "chromium --screenshot $1: no PNG"
}

# the rendered DOM holds what the report document (-o json) holds
check_dom() { # check_dom JSON DOM
        python3 - "$1" "$2" <<'PY'
import html, json, re, sys
rep = json.load(open(sys.argv[1]))
dom = open(sys.argv[2], encoding="utf-8").read()
# a long name is drawn as head + tail (two spans): one word again
dom = dom.replace('</span><span class="t">', "")
text = html.unescape(re.sub(r"<[^>]+>", " ", dom))
attrs = html.unescape(dom)
run = rep["asWritten"]
errs = []
scripts = re.findall(r"<script[^>]*>", dom, re.I)
if scripts != ["<script>"]:
    errs.append("the page has other scripts than the one inline filter script: %s" % scripts)
if re.search(r"""(src|href|action)\s*=\s*["']?(https?:|//|data:|file:)""", dom) or "@import" in dom or "url(http" in dom:
    errs.append("the page loads an external resource")
# Pending pods, grouped by (state, reason): each group's reason and pods
groups = [(m.group(1), html.unescape(m.group(2)), m.group(3)) for m in
          re.finditer(r'<div class="pgroup f (\w+)">.*?<p class="reason">(.*?)</p>(.*?)(?=<div class="pgroup|<h2)', dom, re.S)]
for n in run["nodes"]:
    if 'data-node="%s"' % n["name"] not in attrs or n["name"] not in text:
        errs.append("node %s not drawn" % n["name"])
    for u in n["units"]:
        if u["health"] == "Unhealthy":
            key = "%s/%s" % (n["name"], u["id"])
            if not re.search(r'class="dev unhealthy" data-device="%s"' % re.escape(key), attrs):
                errs.append("unhealthy device %s not marked" % key)
            if key not in text:
                errs.append("unhealthy device %s not named" % key)
        for h in u["heldBy"]:
            if h not in text:
                errs.append("holder %s of %s not shown" % (h, u["id"]))
for p in run["pods"]:
    if p["name"] not in text:
        errs.append("pod %s not shown" % p["name"])
    if p["state"] in ("Pending", "Waiting") and p.get("reason"):
        mine = [g for g in groups if 'data-pod="%s"' % html.escape(p["name"]) in g[2]]
        if len(mine) != 1 or " ".join(p["reason"].split()) != " ".join(mine[0][1].split()):
            errs.append("reason of %s not shown with it: %s" % (p["name"], p["reason"]))
for e in run["events"]:
    if e.split(" ", 1)[1] not in text:
        errs.append("event not shown: %s" % e)
for k in ("asWritten", "allV1", "allV2"):
    if 'data-run="%s"' % k not in dom:
        errs.append("comparison column %s missing" % k)
if errs:
    print("\n".join(errs[:20]))
    sys.exit(1)
PY
}

for f in "$DP_SOURCE_DIR"/examples/*.yaml; do
        b=$(basename "$f" .yaml)
        "$DEVPLANE" simulate -f "$f" -o json --report "$tmp/$b.html" >"$tmp/$b.json" || fail "$b: simulate --report"
        "$DEVPLANE" simulate -f "$f" --report "$tmp/$b-2.html" >/dev/null
        cmp -s "$tmp/$b.html" "$tmp/$b-2.html" || fail "$b: the report differs between runs"
        render "$tmp/$b.html" "$tmp/$b.dom" "$tmp/$b.png"
        out=$(check_dom "$tmp/$b.json" "$tmp/$b.dom") || fail "$b: $out"
        size=$(stat -c %s "$tmp/$b.png")
        [ "$size" -gt 20000 ] || fail "$b: the screenshot is only $size bytes"
done
[ -f "$tmp/seed.dom" ] || fail "examples/seed.yaml was not rendered"

# the seed story: the failed GPU, the Pending pod and its reason, time-sliced shares
grep -q 'class="dev unhealthy" data-device="shared-0/gpu-2"' "$tmp/seed.dom" || fail "seed: shared-0/gpu-2 not marked"
grep -q 'data-pod="default/train-xl"' "$tmp/seed.dom" || fail "seed: train-xl not among the Pending"
grep -q 'time-sliced ×4' "$tmp/seed.dom" || fail "seed: time-slicing not shown"
# MIG instances, DRA partitions and time-sliced shares inside their GPU: the
# device's group holds a cell "<device>: <pod>" for what each pod holds
inside() { # inside JSON DOM
        python3 - "$@" <<'PY'
import html, json, re, sys
run = json.load(open(sys.argv[1]))["asWritten"]
dom = html.unescape(open(sys.argv[2], encoding="utf-8").read())
def group(node, gpu):
    m = re.search(r'<g class="dev[^"]*" data-device="%s/%s">(.*?)</g></g>' % (re.escape(node), re.escape(gpu)), dom, re.S)
    return m.group(1) if m else ""
errs, n = [], 0
for node in run["nodes"]:
    parent = None
    for u in node["units"]:
        if u["kind"].startswith("gpu"):
            parent = u["id"]
        elif u["heldBy"]:
            n += 1
            if "%s: %s" % (u["id"], u["heldBy"][0]) not in group(node["name"], parent):
                errs.append("MIG instance %s/%s of %s not drawn in %s" % (node["name"], u["id"], u["heldBy"][0], parent))
for p in run["pods"]:
    if p["state"] == "Deleted":
        continue
    for d in p.get("devices", {}).get("v1", []):
        if ":replica-" in d:
            n += 1
            gpu = d.split(":")[0]
            if "%s: %s" % (gpu, p["name"]) not in group(p["node"], gpu):
                errs.append("share %s of %s not drawn in its GPU" % (d, p["name"]))
    for d in p.get("devices", {}).get("v2", []):
        m = re.fullmatch(r"(gpu-\d+)-(mig|vgpu|partition)-\d+", d)
        if m:
            n += 1
            if "%s: %s" % (d, p["name"]) not in group(p["node"], m.group(1)):
                errs.append("partition %s of %s not drawn in %s" % (d, p["name"], m.group(1)))
if errs:
    sys.exit("\n".join(errs[:10]))
print(n)
PY
}
n=$(inside "$tmp/seed.json" "$tmp/seed.dom") || fail "seed: $n"
[ "$n" -gt 0 ] || fail "seed: nothing drawn inside a GPU was checked"
n=$(inside "$tmp/compat-groups.json" "$tmp/compat-groups.dom") || fail "compat-groups: $n"
[ "$n" -gt 0 ] || fail "compat-groups: no partition was checked"
grep -qP 'data-device="node-0/gpu-6">(?:(?!data-device).)*>MIG mode<' "$tmp/compat-groups.dom" || fail "compat: node-0/gpu-6 not shown in MIG mode"
grep -qP 'data-device="node-0/gpu-0">(?:(?!data-device).)*>vGPU mode<' "$tmp/compat-groups.dom" || fail "compat: node-0/gpu-0 not shown in vGPU mode"
# V1 vs V2 side by side: each run's fleet drawn small; a pod that runs only
# under one model is drawn only in that run's picture (infer-pair: V2 slices)
[ "$(grep -o '<svg[^>]*class="mini"' "$tmp/seed.dom" | wc -l)" -eq 3 ] || fail "seed: not three fleet pictures side by side"
python3 - "$tmp/seed.dom" <<'PY' || fail "seed: side-by-side pictures disagree with the comparison"
import html, re, sys
dom = html.unescape(open(sys.argv[1], encoding="utf-8").read())
cols = {m.group(1): m.group(2) for m in re.finditer(r'data-run="(\w+)">.*?<svg[^>]*class="mini"[^>]*>(.*?)</svg>', dom, re.S)}
held = lambda run, pod: re.search(r"<title>[^<]*: %s</title>" % re.escape(pod), cols[run]) is not None
assert held("asWritten", "default/infer-pair") and held("allV2", "default/infer-pair"), "infer-pair missing"
assert not held("allV1", "default/infer-pair"), "infer-pair drawn in the all-V1 run where it is Pending"
PY

# evicted pods (NoExecute device failures): listed with their reason, not drawn as holders
"$DEVPLANE" simulate -f "$DP_SOURCE_DIR/tests/sched/scenarios/noexecute-failure.yaml" --report "$tmp/evict.html" >/dev/null ||
        fail "evictions: simulate"
python3 - "$tmp/evict.html" <<'PY' || fail "evictions: the page"
import html, re, sys
page = html.unescape(open(sys.argv[1], encoding="utf-8").read())
groups = [m.group(0) for m in re.finditer(r'<div class="pgroup f \w+">.*?(?=<div class="pgroup|<h2)', page, re.S)]
for pod, dev in (("default/a", "gpu-0"), ("default/b", "gpu-1")):
    m = [g for g in groups if 'data-pod="%s"' % pod in g]
    assert len(m) == 1 and ">Evicted<" in m[0], "%s not listed as Evicted" % pod
    assert "device gpu.example.com/node-0/%s has taint gpu.example.com/unhealthy:NoExecute" % dev in m[0], m[0]
    assert not re.search(r"<title>[^<]*: %s( \(unhealthy\))?</title>" % re.escape(pod), page), "%s drawn as a holder" % pod
assert "<title>gpu-0: free (unhealthy)</title>" in page, "gpu-0 not drawn free and unhealthy"
assert "<title>gpu-2: default/c (unhealthy)</title>" in page, "default/c (kept its GPU) not drawn"
PY

# strings from input are escaped: the Fleet's name is free text that reaches
# the title and the header
cat >"$tmp/esc.yaml" <<'YAML'
apiVersion: devplane.io/v1alpha1
kind: Fleet
metadata: {name: "<script>alert(1)</script> & 'x' \"y\""}
spec:
  nodeGroups:
  - {name: n, profile: example-gpu, count: 1, model: v2}
YAML
"$DEVPLANE" simulate -f "$tmp/esc.yaml" --report "$tmp/esc.html" >/dev/null || fail "escaping: simulate"
! grep -qi '<script>alert' "$tmp/esc.html" || fail "escaping: raw markup from input in the page"
[ "$(grep -oi '<script' "$tmp/esc.html" | wc -l)" -eq 1 ] || fail "escaping: a script besides the filter's"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;x&#39; &quot;y&quot;' "$tmp/esc.html" ||
        fail "escaping: the fleet name is not in the page, escaped"
render "$tmp/esc.html" "$tmp/esc.dom" "$tmp/esc.png"
grep -q "&lt;script&gt;alert(1)&lt;/script&gt;" "$tmp/esc.dom" || fail "escaping: chromium did not show the name as text"

# a bad path: a clear error, exit 2, nothing on stdout
set +e
"$DEVPLANE" simulate --report "$tmp/no/such/dir/r.html" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "bad --report path: exit $rc, want 2"
grep -q -- "--report: $tmp/no/such/dir/r.html: .*No such file or directory" "$tmp/bad.err" ||
        fail "bad path: $(cat "$tmp/bad.err")"
[ ! -s "$tmp/bad.out" ] || fail "bad path: the tables were printed anyway"
# written atomically: no temporary file left beside it
"$DEVPLANE" simulate --report "$tmp/atomic.html" >/dev/null
[ -s "$tmp/atomic.html" ] || fail "no report written"
[ "$(find "$tmp" -maxdepth 1 -name '.atomic.html.*' | wc -l)" -eq 0 ] || fail "a temporary file was left"
echo "ok"
