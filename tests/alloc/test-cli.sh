#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# devplane allocate: output formats, exit statuses, bad input on stderr only.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat cases/fixtures/example-gpu.yaml > "$tmp/fleet.yaml"
cat > "$tmp/claims.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
YAML

# a directory and a file together; one claim prints as one object
mkdir "$tmp/dir" && cp "$tmp/fleet.yaml" "$tmp/dir/"
out=$("$DEVPLANE" allocate -f "$tmp/dir" -f "$tmp/claims.yaml") || fail "exit $?"
grep -q '^kind: ResourceClaim' <<<"$out" || fail "yaml output: $out"
grep -q 'device: gpu-0' <<<"$out" || fail "yaml output lacks the device: $out"

out=$("$DEVPLANE" allocate -f "$tmp/fleet.yaml" -f "$tmp/claims.yaml" -o json)
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["status"]["allocation"]["devices"]["results"][0]["device"]=="gpu-0"' <<<"$out" \
        || fail "json output: $out"

out=$("$DEVPLANE" allocate -f "$tmp/fleet.yaml" -f "$tmp/claims.yaml" -o table)
grep -q 'default/one .* node-a .* gpu .* gpu.example.com/node-a/gpu-0' <<<"$out" || fail "table: $out"

# bad input: exit 2, nothing on stdout, one line naming the file on stderr
printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: x\n' > "$tmp/broken.yaml"
set +e
out=$("$DEVPLANE" allocate -f "$tmp/fleet.yaml" -f "$tmp/broken.yaml" 2>"$tmp/err")
rc=$?
set -e
[ "$rc" = 2 ] || fail "malformed YAML: exit $rc"
[ -z "$out" ] || fail "malformed YAML printed: $out"
grep -q 'broken.yaml' "$tmp/err" || fail "error does not name the file: $(cat "$tmp/err")"

set +e
"$DEVPLANE" allocate -f "$tmp/fleet.yaml" -o xml >/dev/null 2>&1; rc=$?
"$DEVPLANE" allocate >/dev/null 2>&1; rc2=$?
set -e
[ "$rc" = 2 ] && [ "$rc2" = 2 ] || fail "usage errors: $rc $rc2"
for bad in 0 -1 x 12x 99999999999999999999999; do
        set +e
        "$DEVPLANE" allocate -f "$tmp/fleet.yaml" --max-steps "$bad" >/dev/null 2>"$tmp/err"; rc=$?
        set -e
        [ "$rc" = 2 ] && grep -q -- "--max-steps $bad: must be a positive integer" "$tmp/err" \
                || fail "--max-steps $bad: exit $rc: $(cat "$tmp/err")"
done

# a claim that fits nowhere: one line on stderr, nodes counted per reason;
# the per-node lines only with --details
cat > "$tmp/big.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: big, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 5}}]}}
YAML
set +e
"$DEVPLANE" allocate -f "$tmp/fleet.yaml" -f "$tmp/big.yaml" >/dev/null 2>"$tmp/err"; rc=$?
"$DEVPLANE" allocate -f "$tmp/fleet.yaml" -f "$tmp/big.yaml" --details >/dev/null 2>"$tmp/err-v"; rc2=$?
set -e
[ "$rc" = 1 ] && [ "$rc2" = 1 ] || fail "unsatisfiable claim: exit $rc $rc2"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "not one line per failed claim: $(cat "$tmp/err")"
grep -qx 'ResourceClaim default/big: not allocated: 0/2 nodes are available: 2 nodes: request gpu: needs 5 devices, 4 of 4 usable' "$tmp/err" \
        || fail "grouped reason: $(cat "$tmp/err")"
[ "$(head -1 "$tmp/err-v")" = "$(cat "$tmp/err")" ] || fail "--details changes the claim's line: $(cat "$tmp/err-v")"
grep -qx '  node-a: request gpu: needs 5 devices, 4 of 4 usable' "$tmp/err-v" || fail "--details: $(cat "$tmp/err-v")"
grep -qx '  node-b: request gpu: needs 5 devices, 4 of 4 usable' "$tmp/err-v" || fail "--details: $(cat "$tmp/err-v")"

# -o table: columns as wide as their content (nothing cut at 32, no wide
# gaps), two spaces apart, nothing trailing
cat > "$tmp/three.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: a-claim-whose-name-is-longer-than-thirty-two, namespace: team-with-a-long-namespace}
spec: {devices: {requests: [{name: two-gpus-on-one-node, exactly: {deviceClassName: gpu.example.com, count: 2}}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: big, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 5}}]}}
YAML
set +e
"$DEVPLANE" allocate -f "$tmp/fleet.yaml" -f "$tmp/three.yaml" -o table >"$tmp/t" 2>/dev/null; rc=$?
set -e
[ "$rc" = 1 ] || fail "-o table with a claim not allocated: exit $rc"
cat > "$tmp/want" <<'EOF'
CLAIM                                                                    NODE    REQUEST               DEVICE
default/one                                                              node-a  gpu                   gpu.example.com/node-a/gpu-0
team-with-a-long-namespace/a-claim-whose-name-is-longer-than-thirty-two  node-a  two-gpus-on-one-node  gpu.example.com/node-a/gpu-1
                                                                                 two-gpus-on-one-node  gpu.example.com/node-a/gpu-2
default/big                                                              -       -                     (not allocated)
EOF
diff -u "$tmp/want" "$tmp/t" || fail "-o table widths"

# nothing to allocate: exit 0
"$DEVPLANE" allocate -f "$tmp/fleet.yaml" -o table >/dev/null || fail "no claims"
echo "PASS test-cli.sh"
