#!/usr/bin/env bash
# kubectl's habits on the devplane binary (issue 12): `devplane help CMD`,
# `version -o json|yaml`, "did you mean" for a mistyped command, `cel -o
# json|yaml` with the same verdicts as the text output.
set -euo pipefail
: "${DEVPLANE:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok - $*"; }

"$DEVPLANE" help version >"$T/h" || fail "help version exited $?"
grep -q "usage: devplane version" "$T/h" || fail "help version: $(cat "$T/h")"
"$DEVPLANE" help >"$T/h" && grep -q "^commands:" "$T/h" || fail "help alone: $(cat "$T/h")"
pass "devplane help [CMD] prints the command's help on stdout, exit 0"

rc=0
"$DEVPLANE" simulat 2>"$T/e" || rc=$?
[ "$rc" = 2 ] || fail "a mistyped command exited $rc"
grep -q "unknown command 'simulat'" "$T/e" && grep -q "Did you mean this?" "$T/e" && grep -qx "  simulate" "$T/e" ||
        fail "no suggestion: $(cat "$T/e")"
rc=0
"$DEVPLANE" alloacte 2>"$T/e" || rc=$?
[ "$rc" = 2 ] && grep -qx "  allocate" "$T/e" || fail "a swapped pair is not suggested: $(cat "$T/e")"
rc=0
"$DEVPLANE" zzzzzzzz 2>"$T/e" || rc=$?
[ "$rc" = 2 ] && ! grep -q "Did you mean" "$T/e" || fail "a word far from every command got a suggestion: $(cat "$T/e")"
rc=0
"$DEVPLANE" help simulat 2>"$T/e" || rc=$?
[ "$rc" = 2 ] && grep -qx "  simulate" "$T/e" || fail "help of a mistyped command: rc=$rc $(cat "$T/e")"
pass "unknown commands: exit 2 with 'Did you mean this?' for near names only"

"$DEVPLANE" version -o json >"$T/v.json"
/usr/bin/python3 - "$T/v.json" <<'PY' || fail "version -o json: $(cat "$T/v.json")"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["version"] and v["platform"].startswith("linux/"), v
assert set(v["libraries"]) == {"libnghttp2", "libprotobuf-c", "libyaml", "libpcre2-8"}, v
assert all(v["libraries"].values()) and v["compiler"] == v["compiler"].strip(), v
PY
"$DEVPLANE" version -o yaml | /usr/bin/python3 -c 'import sys, yaml; assert yaml.safe_load(sys.stdin)["libraries"]' ||
        fail "version -o yaml does not parse"
[ "$("$DEVPLANE" version)" = "$("$DEVPLANE" --version)" ] || fail "version and --version differ"
rc=0
"$DEVPLANE" version -o xml 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "version -o xml exited $rc"
pass "version -o json|yaml: version, platform, compiler, library versions"

S=$DP_SOURCE_DIR/tests/cel/cli-slices.yaml
E='device.attributes["gpu.example.com"].model == "LATEST-GPU-MODEL"'
"$DEVPLANE" cel "$E" -f "$S" >"$T/text"
"$DEVPLANE" cel "$E" -f "$S" -o json --cost >"$T/cel.json"
"$DEVPLANE" cel "$E" -f "$S" -o yaml >"$T/cel.yaml"
/usr/bin/python3 - "$T/text" "$T/cel.json" "$T/cel.yaml" "$E" <<'PY' || fail "cel -o json|yaml differs from the text output"
import json, sys, yaml
text = [l.strip() for l in open(sys.argv[1]) if l.strip()]
for doc, costed in ((json.load(open(sys.argv[2])), True), (yaml.safe_load(open(sys.argv[3])), False)):
    assert doc["expression"] == sys.argv[4], doc
    assert ("estimatedCost" in doc) == costed, doc
    got = [f'{d["pool"]}/{d["device"]}: {str(d["matches"]).lower()}' for d in doc["devices"]]
    assert got == text, (got, text)
    assert all(("cost" in d) == costed and d["driver"] for d in doc["devices"]), doc
PY
rc=0
"$DEVPLANE" cel 'device.attributes["gpu.example.com"].index / 0 == 1' -f "$S" -o json >"$T/err.json" || rc=$?
[ "$rc" = 1 ] || fail "runtime error: exit $rc, expected 1"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert all("division by zero" in x["error"] and "matches" not in x for x in d["devices"]), d' \
        "$T/err.json" || fail "runtime errors in -o json: $(cat "$T/err.json")"
pass "cel -o json|yaml: the text output's verdicts, costs with --cost, runtime errors per device (exit 1)"
