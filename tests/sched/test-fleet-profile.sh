#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A Fleet nodeGroup naming a DeviceProfile file (`profile: path.yaml`, relative
# to the Fleet file's directory) instead of a built-in profile name:
# the built-in example-gpu's own text as a file places pods exactly as the
# built-in name does; tests/tools/v2-e2e/example-gpu-partitions.yaml (partition
# mode) gives the V2 node partition devices; the path is read relative to the
# Fleet file whatever the working directory, also when -f names a directory;
# a missing or bad profile file is bad input (exit 2) naming the Fleet file,
# the Fleet, the field path and the profile file.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$tmp/fleets/sub" "$tmp/profiles" "$tmp/elsewhere/deeper"
cp "$DP_SOURCE_DIR/profiles/example-gpu.yaml" "$tmp/profiles/gpu.yaml"
cp "$DP_SOURCE_DIR/tests/tools/v2-e2e/example-gpu-partitions.yaml" "$tmp/profiles/partitions.yaml"

workload() { # pods p-0..p-3, each claiming one gpu.example.com device
        cat <<'Y'
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
Y
        for i in 0 1 2 3; do
                printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%d, namespace: default}\n' "$i"
                printf 'spec:\n  containers:\n  - name: c\n    image: x\n    resources: {claims: [{name: gpu}]}\n'
                printf '  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: one-gpu}\n'
        done
}
fleet() { # fleet FILE PROFILE
        printf 'apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: f}\nspec:\n  nodeGroups:\n' >"$1"
        printf '  - {name: g, profile: %s, count: 2, model: v2}\n' "$2" >>"$1"
        workload >>"$1"
}
placements() { # the pods' state, node and devices from -o json
        python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]:
    print(p["name"], p["state"], p.get("node", "-"), ",".join(p.get("devices", {}).get("v2", [])))
' "$1"
}

# the built-in name and the same profile as a file: same placements
fleet "$tmp/fleets/builtin.yaml" example-gpu
fleet "$tmp/fleets/file.yaml" ../profiles/gpu.yaml
"$DEVPLANE" simulate -f "$tmp/fleets/builtin.yaml" -o json >"$tmp/builtin.json" || fail "simulate built-in"
"$DEVPLANE" simulate -f "$tmp/fleets/file.yaml" -o json >"$tmp/file.json" || fail "simulate profile file"
placements "$tmp/builtin.json" >"$tmp/builtin.txt"
placements "$tmp/file.json" >"$tmp/file.txt"
[ "$(grep -c ' Running ' "$tmp/file.txt")" = 4 ] || fail "profile file: not every pod runs: $(cat "$tmp/file.txt")"
diff -u "$tmp/builtin.txt" "$tmp/file.txt" || fail "profile file places pods differently from the built-in name"
grep -q '"profile": "../profiles/gpu.yaml"' "$tmp/file.json" || fail "report does not name the profile as written"

# relative to the Fleet file, not the working directory; -f FILE and -f DIR alike; deterministic
(cd "$tmp/elsewhere/deeper" && "$DEVPLANE" simulate -f ../../fleets/file.yaml -o json) >"$tmp/rel.json" || fail "simulate from elsewhere"
cmp -s "$tmp/file.json" "$tmp/rel.json" || placements "$tmp/rel.json" | diff -u "$tmp/file.txt" - ||
        fail "working directory changed the placements"
fleet "$tmp/fleets/sub/only.yaml" ../../profiles/gpu.yaml
"$DEVPLANE" simulate -f "$tmp/fleets/sub" -o json >"$tmp/dir.json" || fail "simulate -f DIR"
placements "$tmp/dir.json" | diff -u "$tmp/file.txt" - || fail "-f DIR: placements differ"
for o in table json yaml; do
        "$DEVPLANE" simulate -f "$tmp/fleets/file.yaml" -o "$o" >"$tmp/a.$o"
        "$DEVPLANE" simulate -f "$tmp/fleets/file.yaml" -o "$o" >"$tmp/b.$o"
        cmp -s "$tmp/a.$o" "$tmp/b.$o" || fail "-o $o: runs differ"
done
# absolute paths are taken as they are
fleet "$tmp/fleets/abs.yaml" "$tmp/profiles/gpu.yaml"
"$DEVPLANE" simulate -f "$tmp/fleets/abs.yaml" -o json >"$tmp/abs.json" || fail "absolute profile path"
placements "$tmp/abs.json" | diff -u "$tmp/file.txt" - || fail "absolute path: placements differ"

# dra.compatGroups builds its second inventory from the same file
sed 's#^    profile: example-gpu$#    profile: ../profiles/gpu.yaml#' "$DP_SOURCE_DIR/examples/compat-groups.yaml" >"$tmp/fleets/compat.yaml"
grep -q 'profile: ../profiles/gpu.yaml' "$tmp/fleets/compat.yaml" || fail "compat-groups example: no profile line to replace"
"$DEVPLANE" simulate -f "$DP_SOURCE_DIR/examples/compat-groups.yaml" -o json >"$tmp/compat-builtin.json"
(cd "$tmp/elsewhere/deeper" && "$DEVPLANE" simulate -f ../../fleets/compat.yaml -o json) >"$tmp/compat-file.json" ||
        fail "compat groups with a profile file"
placements "$tmp/compat-builtin.json" >"$tmp/compat-builtin.txt"
placements "$tmp/compat-file.json" | diff -u "$tmp/compat-builtin.txt" - || fail "compat groups: placements differ"
grep -q -- '-mig-[0-9]' "$tmp/compat-builtin.txt" || fail "compat groups: no MIG-mode partition taken"

# partition mode from the v2-e2e profile file: the node publishes partitions
fleet "$tmp/fleets/parts.yaml" ../profiles/partitions.yaml
"$DEVPLANE" simulate -f "$tmp/fleets/parts.yaml" -o json >"$tmp/parts.json" || fail "simulate partitions profile"
placements "$tmp/parts.json" >"$tmp/parts.txt"
[ "$(grep -c ' Running ' "$tmp/parts.txt")" = 4 ] || fail "partitions: not every pod runs: $(cat "$tmp/parts.txt")"
grep -q -- '-partition-[0-9]' "$tmp/parts.txt" || fail "partitions profile: no partition device taken: $(cat "$tmp/parts.txt")"
"$DEVPLANE" explain pod p-0 -f "$tmp/fleets/parts.yaml" >"$tmp/explain" || fail "explain with a profile file"
grep -q '^Pod default/p-0: Running' "$tmp/explain" || fail "explain: $(cat "$tmp/explain")"

# bad input: exit 2, one line naming the Fleet file, the Fleet, the field and the profile file
expect_bad() { # expect_bad PROFILE MESSAGE-SUBSTRING...
        local p=$1 rc=0
        shift
        fleet "$tmp/fleets/bad.yaml" "$p"
        for cmd in simulate "explain pod p-0"; do
                rc=0
                # shellcheck disable=SC2086
                "$DEVPLANE" $cmd -f "$tmp/fleets/bad.yaml" >"$tmp/out" 2>"$tmp/err" || rc=$?
                [ "$rc" = 2 ] || fail "profile $p: $cmd exit $rc, want 2"
                [ ! -s "$tmp/out" ] || fail "profile $p: $cmd wrote to stdout"
                for want in "$tmp/fleets/bad.yaml: Fleet f: spec.nodeGroups[0].profile (line 6): " "$@"; do
                        grep -qF -- "$want" "$tmp/err" || fail "profile $p: $cmd: no '$want' in: $(cat "$tmp/err")"
                done
        done
}
expect_bad ../profiles/missing.yaml "$tmp/fleets/../profiles/missing.yaml: No such file or directory"
printf 'apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: x}\nspec:\n  domain: example.com\n  driverName: [1]\n' \
        >"$tmp/profiles/bad.yaml"
expect_bad ../profiles/bad.yaml "$tmp/fleets/../profiles/bad.yaml:" "spec.driverName"
printf 'not: [valid\n' >"$tmp/profiles/broken.yaml"
expect_bad ../profiles/broken.yaml "$tmp/fleets/../profiles/broken.yaml"
expect_bad ../profiles "$tmp/fleets/../profiles: Is a directory"
# an unknown built-in name is still reported when the run builds the node
fleet "$tmp/fleets/unknown.yaml" no-such-profile
rc=0
"$DEVPLANE" simulate -f "$tmp/fleets/unknown.yaml" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -qF 'unknown built-in profile "no-such-profile"' "$tmp/err" || fail "unknown name: exit $rc: $(cat "$tmp/err")"
echo PASS
