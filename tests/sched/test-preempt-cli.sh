#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Preemption through the binary (sched/preempt.c): simulate's table and -o json say who
# preempted whom, explain names the outcome, --no-preemption turns the PostFilter off, a DRA
# device is never freed by preemption unless --dra-preemption asks what KEP-5690 would do.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cpu="$DP_SOURCE_DIR/fuzz/corpus/fuzz-sched-fleet/preemption.yaml"
dra="$DP_SOURCE_DIR/tests/sched/scenarios/preempt-dra.yaml"

"$DEVPLANE" simulate -f "$cpu" >"$tmp/t"
grep -q "^default/batch-0  *Preempted  *b .*preempted by default/urgent on b at t=0s" "$tmp/t" || fail "victim: $(cat "$tmp/t")"
grep -q "^default/urgent  *Running  *b .*would preempt default/batch-0 on b" "$tmp/t" || fail "preemptor: $(cat "$tmp/t")"
grep -q "^default/keep-0  *Running" "$tmp/t" || fail "the PDB's pod went: $(cat "$tmp/t")"
"$DEVPLANE" simulate -f "$cpu" -o json >"$tmp/j"
python3 - "$tmp/j" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
pods = {p["name"]: p for p in d["pods"]}
assert pods["default/batch-0"]["preemptedBy"] == "default/urgent", pods["default/batch-0"]
assert pods["default/urgent"]["preempted"] == ["default/batch-0"] and pods["default/urgent"]["nominatedNode"] == "b"
p = pods["default/polite"]
assert p["reason"] == "0/2 nodes are available: 2 Insufficient cpu.", p
assert p["preemption"] == "preemption: not eligible due to preemptionPolicy=Never.", p
assert p["message"] == p["reason"] + " no new claims to deallocate, " + p["preemption"], p
assert d["summary"]["preempted"] == 1, d["summary"]
assert "t=0s default/batch-0 preempted by default/urgent on b" in d["events"], d["events"]
PY
"$DEVPLANE" explain -f "$cpu" batch-0 >"$tmp/e"
grep -q "^Preempted at t=0s on b by default/urgent" "$tmp/e" || fail "explain victim: $(cat "$tmp/e")"
"$DEVPLANE" explain -f "$cpu" urgent >"$tmp/e"
grep -q "^It preempted default/batch-0 on b at t=0s" "$tmp/e" || fail "explain preemptor: $(cat "$tmp/e")"
"$DEVPLANE" explain -f "$cpu" polite >"$tmp/e"
grep -qx "preemption: not eligible due to preemptionPolicy=Never." "$tmp/e" || fail "explain Never: $(cat "$tmp/e")"

"$DEVPLANE" simulate --no-preemption -f "$cpu" -o json >"$tmp/j"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["asWritten"]; assert d["summary"]["preempted"] == 0
assert not any("preemption" in p for p in d["pods"]), d["pods"]' "$tmp/j" || fail "--no-preemption"

"$DEVPLANE" simulate -f "$dra" >"$tmp/t"
grep -q "^default/batch  *Running" "$tmp/t" || fail "DRA: the holder was preempted: $(cat "$tmp/t")"
grep -q "^default/urgent  *Pending .*cannot allocate all claims" "$tmp/t" || fail "DRA: $(cat "$tmp/t")"
"$DEVPLANE" explain -f "$dra" urgent >"$tmp/e"
grep -qx "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling." "$tmp/e" ||
        fail "DRA explain: $(cat "$tmp/e")"
grep -q "does not preempt for DRA devices" "$tmp/e" || fail "DRA explain says why: $(cat "$tmp/e")"
"$DEVPLANE" simulate --dra-preemption -f "$dra" >"$tmp/t"
grep -q "^default/batch  *Preempted  *n1 .*preempted by default/urgent" "$tmp/t" || fail "--dra-preemption: $(cat "$tmp/t")"
grep -q "^default/urgent  *Running  *n1" "$tmp/t" || fail "--dra-preemption preemptor: $(cat "$tmp/t")"
echo "ok - preemption through the binary"
