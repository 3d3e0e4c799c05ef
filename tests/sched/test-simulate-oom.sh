#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Out of memory in simulate, explain and allocate: exit status 3 (not 2, bad
# input), and a message saying what was being built and how big the input
# was. Memory is made short by capping one allocation at 1 MiB: ASan's
# max_allocation_size_mb with allocator_may_return_null in the sanitizer
# build, `ulimit -v` for a binary without ASan.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if grep -q __asan_init "$DEVPLANE"; then
        short() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=1" "$@"; }
else
        short() { (ulimit -v 200000 && "$@"); }
fi

# 1,500 nodes and no pods: small to read, the report is several MiB
printf 'apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: big}\nspec:\n  nodeGroups:\n  - {name: n, profile: a100-80gb-8, count: 1500, model: v1}\n' >"$tmp/big.yaml"
rc=0
short "$DEVPLANE" simulate -f "$tmp/big.yaml" -o json >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 3 ] || fail "simulate: exit $rc, want 3: $(tail -3 "$tmp/err")"
grep -q "^devplane simulate: out of memory while .* (input: 1500 nodes, 0 pods, 0 objects); input: 1 file(s), [0-9]* bytes$" \
        "$tmp/err" || fail "simulate message: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "partial output on stdout"

# an input that does not fit while it is read: 3 MiB of pods
python3 - "$tmp/pods.yaml" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: f}\nspec:\n  nodeGroups:\n"
            "  - {name: n, profile: a100-80gb-8, count: 1, model: v1}\n---\napiVersion: v1\nkind: List\nitems:\n")
    for i in range(20000):
        f.write("- {apiVersion: v1, kind: Pod, metadata: {name: pod-%d}, spec: {containers: [{name: c, image: x}]}}\n" % i)
PY
for cmd in "simulate" "explain pod-1" "allocate"; do
        rc=0
        short "$DEVPLANE" $cmd -f "$tmp/pods.yaml" >"$tmp/out" 2>"$tmp/err" || rc=$?
        [ "$rc" = 3 ] || fail "$cmd on a large input: exit $rc, want 3: $(tail -3 "$tmp/err")"
        grep -q "^devplane ${cmd%% *}: out of memory while loading the input; input: 1 file(s), [0-9]* bytes$" "$tmp/err" ||
                fail "$cmd message: $(cat "$tmp/err")"
done
# bad input stays 2
printf 'kind: Nope\n' >"$tmp/bad.yaml"
rc=0
"$DEVPLANE" simulate -f "$tmp/bad.yaml" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "bad input: exit $rc, want 2"
# the help says so
for cmd in simulate explain allocate; do
        help=$("$DEVPLANE" $cmd --help) # whole: grep -q would quit early and the writer die of SIGPIPE
        grep -q "3 out of memory" <<<"$help" || fail "$cmd --help does not document exit status 3"
done
echo PASS
