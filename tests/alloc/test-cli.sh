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

# nothing to allocate: exit 0
"$DEVPLANE" allocate -f "$tmp/fleet.yaml" -o table >/dev/null || fail "no claims"
echo "PASS test-cli.sh"
