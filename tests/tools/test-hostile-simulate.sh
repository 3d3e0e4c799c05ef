#!/usr/bin/env bash
# `devplane simulate` refuses a timeline time that overflows when scaled to
# seconds (issue 11, item 11): it wrapped around to a small time (a signed
# overflow UBSan reports). One clear error, exit status 2, no output.
set -euo pipefail
: "${DEVPLANE:?DEVPLANE must point to the devplane binary}"
T=$(mktemp -d "${TMPDIR:-/tmp}/dp-sim-dur.XXXXXX")
trap 'rm -rf "$T"' EXIT
for at in 2562047788015216h 9223372036854775807h 153722867280912931m 101d 8640001; do
        cat >"$T/in.yaml" <<YAML
apiVersion: devplane.io/v1alpha1
kind: Fleet
metadata: {name: t}
spec:
  nodeGroups:
  - {name: n, profile: example-gpu, count: 1}
---
apiVersion: devplane.io/v1alpha1
kind: Timeline
metadata: {name: tl}
spec:
  events:
  - {at: $at, fail: [n-0/gpu-0]}
YAML
        rc=0
        "$DEVPLANE" simulate -f "$T/in.yaml" >"$T/out" 2>"$T/err" || rc=$?
        [ "$rc" = 2 ] || { cat "$T/err"; echo "FAIL: at: $at: exit $rc, want 2"; exit 1; }
        [ ! -s "$T/out" ] || { echo "FAIL: at: $at: output on bad input"; exit 1; }
        grep -q "spec.events\[0\].at: must be" "$T/err" || { cat "$T/err"; echo "FAIL: at: $at: no clear error"; exit 1; }
        echo "ok - at: $at refused: $(head -c 160 "$T/err")"
done
