#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# devplane simulate / explain through the real binary, on examples/.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# the built-in scenario is examples/seed.yaml
"$DEVPLANE" simulate >"$tmp/builtin.txt"
"$DEVPLANE" simulate -f "$DP_SOURCE_DIR/examples/seed.yaml" >"$tmp/file.txt"
cmp -s "$tmp/builtin.txt" "$tmp/file.txt" || fail "built-in scenario differs from examples/seed.yaml"
grep -q '^default/train-xl  *Pending' "$tmp/file.txt" || fail "train-xl should be Pending"
grep -q 'V1 vs V2' "$tmp/file.txt" || fail "no comparison"
grep -q 'shared-0/gpu-2 .*Unhealthy' "$tmp/file.txt" || fail "the failed GPU is not marked"

# every example, every format, byte-identical on repeated runs
for f in "$DP_SOURCE_DIR"/examples/*.yaml; do
        for o in table json yaml; do
                "$DEVPLANE" simulate -f "$f" -o "$o" >"$tmp/a"
                for i in 1 2 3; do
                        "$DEVPLANE" simulate -f "$f" -o "$o" >"$tmp/b"
                        cmp -s "$tmp/a" "$tmp/b" || fail "$f -o $o: run $i differs"
                done
        done
        "$DEVPLANE" simulate -f "$f" -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["asWritten"]["pods"]' ||
                fail "$f: -o json is not the report"
done

# scenario 15 through the binary: two schedulers with stale views, no device twice
"$DEVPLANE" simulate -f "$DP_SOURCE_DIR/examples/two-schedulers.yaml" >"$tmp/two"
grep -q "^default/a2  *Waiting  *v1-0" "$tmp/two" || fail "two schedulers, V1: $(cat "$tmp/two")"
grep -q "^default/b2  *Pending" "$tmp/two" || fail "two schedulers, V2"
# into a file: grep -q stops reading, and under pipefail the writer's SIGPIPE would fail the test
"$DEVPLANE" simulate -f "$DP_SOURCE_DIR/examples/two-schedulers.yaml" -o json >"$tmp/two.json"
grep -q "second scheduler's binding rejected: device gpu.nvidia.com/v2-0/gpu-0 is already allocated" "$tmp/two.json" ||
        fail "two schedulers: no rejected write"

# explain: Pending with the closest nodes; a time-sliced GPU's sharers
"$DEVPLANE" explain pod train-xl >"$tmp/x"
grep -q '0/4 nodes are available: 1 cannot allocate all claims, 3 node(s) didn' "$tmp/x" || fail "explain summary: $(cat "$tmp/x")"
grep -q '^  1: cannot allocate all claims (whole-0)$' "$tmp/x" || fail "explain nodes: $(cat "$tmp/x")"
"$DEVPLANE" explain pod train-xl --details >"$tmp/x"
grep -q '^  whole-0: cannot allocate all claims$' "$tmp/x" || fail "explain --details: $(cat "$tmp/x")"
"$DEVPLANE" explain chat-0 -f "$DP_SOURCE_DIR/examples/seed.yaml" >"$tmp/x"
grep -q 'is shared (time-slicing): also held by default/finetune-late' "$tmp/x" || fail "explain sharing: $(cat "$tmp/x")"

# bad input: exit 2, one clear message naming file, object, field
set +e
printf 'apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: f}\nspec:\n  nodeGroups:\n  - {name: g, profile: a100-80gb-8, count: lots}\n' >"$tmp/bad.yaml"
"$DEVPLANE" simulate -f "$tmp/bad.yaml" >"$tmp/out" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "bad count: exit $rc"
[ ! -s "$tmp/out" ] || fail "bad input printed a report"
grep -q "bad.yaml: Fleet f: spec.nodeGroups\[0\].count" "$tmp/err" || fail "bad count message: $(cat "$tmp/err")"
set +e
"$DEVPLANE" simulate -o html >/dev/null 2>&1; rc1=$?
"$DEVPLANE" explain nobody >/dev/null 2>"$tmp/err"; rc2=$?
"$DEVPLANE" simulate -f "$tmp/missing.yaml" >/dev/null 2>&1; rc3=$?
set -e
[ "$rc1" = 2 ] && [ "$rc2" = 2 ] && [ "$rc3" = 2 ] || fail "exit codes $rc1 $rc2 $rc3"
grep -q 'pod nobody is not in the input' "$tmp/err" || fail "explain unknown pod"
# tables sized to their content: each column starts where its header does,
# is as wide as its widest cell plus two spaces, nothing is cut, nothing trails
"$DEVPLANE" simulate >"$tmp/t"
python3 - "$tmp/t" <<'EOF' || fail "table widths"
import re, sys
blocks, cur = [], []
for line in open(sys.argv[1]).read().split("\n")[2:]:
    if line == "":
        if cur: blocks.append(cur)
        cur = []
    elif not line.startswith("V1 vs V2"):
        cur.append(line)
for b in blocks:
    head = b[0]
    starts = [m.start() for m in re.finditer(r"(?<=  )\S", head)]  # columns after the first
    if head[0] != " ": starts = [0] + starts
    for line in b:
        assert line == line.rstrip(), ("trailing blanks", line)
    for k, s in enumerate(starts[1:], 1):
        prev = starts[k - 1]
        widest = max(len(l[prev:s].rstrip()) for l in b)
        assert s - prev == widest + 2, (head, k, s - prev, widest)
        for l in b:
            assert len(l) <= s or l[s - 2:s] == "  ", ("cell cut or column moved", l)
print("widths ok:", len(blocks), "tables")
EOF
grep -q '^default/finetune-late .*gpu-7:replica-0$' "$tmp/t" || fail "a long DEVICES cell is cut"
echo "PASS test-simulate"
