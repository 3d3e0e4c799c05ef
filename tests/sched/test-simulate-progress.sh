#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Progress on stderr for long simulations (docs/scheduler.md): when stderr is
# a terminal and a run goes on past 2 s, one line "simulating <run>: N/M
# pods" rewritten with \r and cleared when the run ends; never when stderr is
# a file or a pipe, and stdout is the same either way.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 500 nodes, 5,000 one-GPU pods: seconds of CPU under the sanitizers
python3 - "$tmp/big.yaml" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: big}\nspec:\n"
            "  nodeGroups:\n  - {name: g, profile: a100-80gb-8, count: 500, model: v1}\n"
            "---\napiVersion: v1\nkind: List\nitems:\n")
    for i in range(5000):
        f.write("- {apiVersion: v1, kind: Pod, metadata: {name: p-%d}, spec: {containers: "
                "[{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}}\n" % i)
EOF

# not a terminal: nothing on stderr
"$DEVPLANE" simulate -f "$tmp/big.yaml" >"$tmp/plain.out" 2>"$tmp/plain.err"
[ ! -s "$tmp/plain.err" ] || fail "stderr is a file, yet: $(head -c 200 "$tmp/plain.err")"

# a terminal: the progress line, cleared; stdout unchanged
python3 - "$DEVPLANE" "$tmp" <<'EOF'
import os, pty, re, subprocess, sys, time
devplane, tmp = sys.argv[1], sys.argv[2]
m, s = pty.openpty()
t0 = time.monotonic()
p = subprocess.Popen([devplane, "simulate", "-f", f"{tmp}/big.yaml"], stdout=open(f"{tmp}/tty.out", "w"),
                     stderr=s, stdin=subprocess.DEVNULL)
os.close(s)
err = b""
while True:
    try:
        d = os.read(m, 65536)
    except OSError:
        break
    if not d:
        break
    err += d
assert p.wait() == 0, p.returncode
took = time.monotonic() - t0
err = err.decode()
shown = re.findall(r"\rsimulating (as written|all-V1|all-V2): ([0-9,]+)/5,000 pods *", err)
if took < 4 and not shown:
    print(f"ok - progress: the runs took {took:.1f}s, too short to show it")
    sys.exit(0)
assert shown, ("no progress on a terminal after %.1fs" % took, err[:300])
assert all(int(n.replace(",", "")) <= 5000 for _, n in shown), shown
# each run's line is cleared at its end: what stays visible is blank
visible = err.rsplit("\r", 2)
assert err.endswith("\r") and visible[-2].strip() == "", ("the last line is not cleared", err[-200:])
assert "\n" not in err, ("a newline in the progress", err[:300])
print(f"ok - progress: {len(shown)} updates in {took:.1f}s, cleared at the end")
EOF
cmp -s "$tmp/plain.out" "$tmp/tty.out" || fail "stdout differs with stderr on a terminal"
echo "PASS test-simulate-progress"
