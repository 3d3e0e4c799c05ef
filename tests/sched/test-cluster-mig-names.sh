#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 12: one MIG instance has one name. The same pod, asking one
# nvidia.com/mig-1g.10gb, placed once through the device plugin (V1) and once
# through DRA (V2, the DeviceClass's extendedResourceName), gets the same
# instance under the same name, gpu-0-mig-1g10gb-0 (a DNS label), in the pod
# table, the claim table, the device table and the JSON; the dotted name of
# earlier releases is still accepted by --fail-device and a Timeline.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat >"$tmp/mig.yaml" <<'EOF'
apiVersion: devplane.io/v1alpha1
kind: Fleet
metadata: {name: mignames}
spec:
  nodeGroups:
  - {name: mig, profile: a100-mixed, count: 1, model: both, agent: {version: v1, flags: {migStrategy: mixed}}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig-1g.10gb}
spec:
  extendedResourceName: nvidia.com/mig-1g.10gb
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}
---
apiVersion: v1
kind: Pod
metadata: {name: one}
spec:
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/mig-1g.10gb: 1}}}]
EOF
name=gpu-0-mig-1g10gb-0
for m in v1 v2; do
        "$DEVPLANE" simulate -f "$tmp/mig.yaml" --mode "mig=$m" >"$tmp/$m.txt"
        "$DEVPLANE" simulate -f "$tmp/mig.yaml" --mode "mig=$m" -o json >"$tmp/$m.json"
        M=$(echo "$m" | tr v V)
        grep -Eq "^default/one +Running +mig-0 +$M +$name\$" "$tmp/$m.txt" ||
                fail "$m: pod table: want $name: $(grep '^default/one' "$tmp/$m.txt")"
        grep -Eq "^mig-0/$name +1g\.10gb +Healthy +default/one *\$" "$tmp/$m.txt" ||
                fail "$m: device table: want mig-0/$name held by default/one"
        if grep -q 'mig-1g\.10gb-' "$tmp/$m.txt"; then fail "$m: a dotted MIG name in the table"; fi
        if grep -q 'mig-1g\.10gb-' "$tmp/$m.json"; then fail "$m: a dotted MIG name in the JSON"; fi
done
grep -Eq "^default/one +one-extended-resources +container-0-request-0 +gpu\.nvidia\.com/mig-0/$name\$" "$tmp/v2.txt" ||
        fail "v2: claim table: want gpu.nvidia.com/mig-0/$name"
python3 - "$tmp" "$name" <<'EOF'
import json, sys
tmp, name = sys.argv[1], sys.argv[2]
def pod(m):
    d = json.load(open(f"{tmp}/{m}.json"))["asWritten"]
    p = next(p for p in d["pods"] if p["name"] == "default/one")
    units = {u["id"]: u for n in d["nodes"] for u in n["units"]}
    return p, units
p1, u1 = pod("v1")
p2, u2 = pod("v2")
assert p1["devices"] == {"v1": [name]}, p1
assert p2["devices"] == {"v2": [name]}, p2
assert [r["device"] for c in p2["claims"] for r in c["results"]] == [name], p2
assert u1[name]["heldBy"] == u2[name]["heldBy"] == ["default/one"], (u1[name], u2[name])
assert sorted(u1) == sorted(u2), "the device tables of V1 and V2 name different units"
EOF
# The dotted name (and the new one) as input: the instance fails, the pod takes the next.
for dev in gpu-0-mig-1g.10gb-0 gpu-0-mig-1g10gb-0; do
        for m in v1 v2; do
                "$DEVPLANE" simulate -f "$tmp/mig.yaml" --mode "mig=$m" --fail-device "mig-0/$dev" >"$tmp/f.txt"
                grep -Eq "^mig-0/$name +1g\.10gb +Unhealthy +- *\$" "$tmp/f.txt" || fail "--fail-device mig-0/$dev ($m)"
                grep -Eq "^default/one +Running +mig-0 +[V12]+ +gpu-0-mig-1g10gb-1\$" "$tmp/f.txt" ||
                        fail "--fail-device mig-0/$dev ($m): pod not on the next instance"
        done
done
echo "ok - one MIG instance, one name ($name) in V1 and V2, table and JSON; dotted name accepted as input"
