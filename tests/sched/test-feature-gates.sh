#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# --feature-gates on `devplane simulate` and `devplane explain` (as on
# `devplane allocate`): with DRADeviceCompatibilityGroups=false the two-mode
# pools of examples/compat-groups.yaml are incomplete, so every DRA pod stays
# Pending with that reason; =true is the default, byte for byte; an unknown
# gate is bad input (exit 2, nothing on stdout).
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ex="$DP_SOURCE_DIR/examples/compat-groups.yaml"
off=(--feature-gates DRADeviceCompatibilityGroups=false)
on=(--feature-gates DRADeviceCompatibilityGroups=true)

# gate on: the same as no flag, every format; the example places pods
for o in table json yaml; do
        "$DEVPLANE" simulate -f "$ex" -o "$o" >"$tmp/def.$o" || fail "simulate -o $o"
        "$DEVPLANE" simulate -f "$ex" -o "$o" "${on[@]}" >"$tmp/on.$o" || fail "simulate -o $o gate on"
        cmp -s "$tmp/def.$o" "$tmp/on.$o" || fail "-o $o: gate on differs from the default"
done
"$DEVPLANE" explain pod vgpu-4 -f "$ex" >"$tmp/def.explain" || fail "explain"
"$DEVPLANE" explain pod vgpu-4 -f "$ex" "${on[@]}" >"$tmp/on.explain" || fail "explain gate on"
cmp -s "$tmp/def.explain" "$tmp/on.explain" || fail "explain: gate on differs from the default"

# gate off: deterministic, and nothing holds a device
for o in table json yaml; do
        "$DEVPLANE" simulate -f "$ex" -o "$o" "${off[@]}" >"$tmp/off.$o" || fail "simulate -o $o gate off"
        "$DEVPLANE" simulate -f "$ex" -o "$o" "${off[@]}" >"$tmp/off2.$o"
        cmp -s "$tmp/off.$o" "$tmp/off2.$o" || fail "-o $o gate off: runs differ"
        ! cmp -s "$tmp/off.$o" "$tmp/def.$o" || fail "-o $o: gate off changed nothing"
done
python3 - "$tmp/def.json" "$tmp/off.json" <<'PY'
import json, sys
on = json.load(open(sys.argv[1]))["asWritten"]["pods"]
off = json.load(open(sys.argv[2]))["asWritten"]["pods"]
if not any(p["state"] == "Running" for p in on):
    sys.exit("gate on: no pod Running")
bad = []
for p in off:
    if p["state"] == "Deleted":
        continue  # deleted by the timeline while Pending
    if p["state"] != "Pending" or p.get("devices"):
        bad.append("%s: %s %s" % (p["name"], p["state"], p.get("devices")))
    elif p.get("reason") != "0/1 nodes are available: 1 cannot allocate all claims.":
        bad.append("%s: reason %r" % (p["name"], p.get("reason")))
if bad:
    sys.exit("gate off:\n  " + "\n  ".join(bad))
print("PASS gate off: %d pods Pending" % sum(p["state"] == "Pending" for p in off))
PY
"$DEVPLANE" explain pod vgpu-0 -f "$ex" "${off[@]}" >"$tmp/off.explain" || fail "explain gate off"
grep -q '^Pod default/vgpu-0: Pending' "$tmp/off.explain" || fail "explain gate off: $(cat "$tmp/off.explain")"
grep -qF 'pool gpu.example.com/node-0 skipped: incomplete (its devices carry compatibilityGroups and the DRADeviceCompatibilityGroups feature is off)' \
        "$tmp/off.explain" || fail "explain gate off: no incomplete-pool reason: $(cat "$tmp/off.explain")"
# the HTML report runs with the gate too
"$DEVPLANE" simulate -f "$ex" "${off[@]}" --report "$tmp/off.html" >/dev/null || fail "--report gate off"
[ -s "$tmp/off.html" ] || fail "--report gate off: no file"

# bad gates: exit 2, one line naming the flag, nothing on stdout
for cmd in "simulate -f $ex" "explain pod vgpu-0 -f $ex"; do
        name=${cmd%% *}
        for g in DRADeviceCompatibilityGroups DRADeviceCompatibilityGroups=maybe Foo=true ""; do
                rc=0
                # shellcheck disable=SC2086
                "$DEVPLANE" $cmd --feature-gates "$g" >"$tmp/out" 2>"$tmp/err" || rc=$?
                [ "$rc" = 2 ] || fail "$name --feature-gates '$g': exit $rc, want 2"
                [ ! -s "$tmp/out" ] || fail "$name --feature-gates '$g': wrote to stdout"
                want="devplane $name: --feature-gates $g: known: DRADeviceCompatibilityGroups=true|false, DRAListTypeAttributes=true|false"
                [ "$(cat "$tmp/err")" = "$want" ] || fail "$name --feature-gates '$g': $(cat "$tmp/err")"
        done
done
# the built-in scenario takes the flag too (it has no compatibility groups: unchanged)
"$DEVPLANE" simulate >"$tmp/seed.def"
"$DEVPLANE" simulate "${off[@]}" >"$tmp/seed.off"
cmp -s "$tmp/seed.def" "$tmp/seed.off" || fail "built-in scenario: gate off changed it"
echo "PASS"
