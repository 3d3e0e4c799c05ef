#!/usr/bin/env bash
# `devplane demo` (what scripts/demo runs): node + agent in-process, pods
# admitted, one GPU flipped unhealthy, clean shutdown, temp dir removed.
set -euo pipefail
: "${DEVPLANE:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/dp-v1-demo.XXXXXX")
trap 'rm -rf "$T"' EXIT
TMPDIR=$T timeout 60 "$DEVPLANE" demo >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; echo "FAIL: demo exited $?"; exit 1; }
grep -Eq '^nvidia.com/gpu +8 +8 +0 +connected' "$T/out" || { cat "$T/out"; echo "FAIL: no registration table"; exit 1; }
grep -Eq '^ml/training +trainer +nvidia.com/gpu +GPU-[0-9a-f-]+(,GPU-[0-9a-f-]+){3} +Running' "$T/out" || { cat "$T/out"; echo "FAIL: training"; exit 1; }
grep -Eq '^nvidia.com/gpu +8 +7 +7 +connected +unhealthy: GPU-' "$T/out" || { cat "$T/out"; echo "FAIL: unhealthy"; exit 1; }
[ -z "$(ls "$T" | grep devplane-demo || true)" ] || { echo "FAIL: temp dir left behind"; exit 1; }
[ ! -s "$T/err" ] || { cat "$T/err"; echo "FAIL: stderr not empty"; exit 1; }
echo "ok - demo: registered, pods admitted, allocatable 8 -> 7, cleaned up"
