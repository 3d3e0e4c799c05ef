#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CEL differential: random DRA selector expressions, from a seed, evaluated by
devplane's CEL (the cel-diff-eval helper, which compiles and evaluates exactly
as the allocator does) and by the upstream allocator program
($DP_SHARED_DIR/tools/upstream-dra, decompressed at test time), which gets one
adminAccess "All" claim per selector over the same slice: the devices it
allocates are the ones the selector matches; a compile or runtime error fails
the claim. Both sides are reduced to one outcome per selector: "compile error",
"runtime error" (any device) or the set of matching devices.

    test-cel-diff.py [--seed N] [--count N] [--batch N] [--version 1.36.2]
                     [--show N] [--keep DIR] [--evaluator PATH]

Without arguments (CI) it runs a short fixed-seed version and fails on any
disagreement that is not a documented upstream deviation (KNOWN below).
The long run and its figures are in docs/cel.md.
"""
import argparse
import json
import lzma
import os
import random
import stat
import subprocess
import sys
import tempfile

D = "dra.example.com"
O = "other.example.com"

# Selectors on which devplane deliberately differs from upstream (docs/cel.md
# "Where upstream departs from the CEL spec"): a predicate over the expression.
KNOWN = [
    # cel-go turns `x in [constant list]` into a hash-set lookup, which fails
    # for a value Go cannot hash (a Semver, a Quantity): devplane compares
    # element by element and answers (docs/cel.md).
    lambda e, u, d: u[0] == "runtime" and "hash of unhashable type" in u[1],
]


# ---------------------------------------------------------------------------
# Devices


def gen_devices(r, list_types):
    devs = []
    for i in range(r.randint(2, 5)):
        attrs = {}
        if r.random() < 0.8:
            attrs["model"] = {"string": r.choice(["A", "b-1", "x y", "", "GPU-9", "a%b"])}
        if r.random() < 0.8:
            attrs["index"] = {"int": r.choice([0, 1, 2, -3, 7, 1 << 40, 9223372036854775807, -9223372036854775808])}
        if r.random() < 0.7:
            attrs["ver"] = {"version": r.choice(["1.2.3", "0.0.1-alpha", "1.2.3+build.5", "10.0.0", "1.10.0-rc.1",
                                                 "18446744073709551615.0.0", "2.0.0-alpha.beta"])}
        if r.random() < 0.6:
            attrs["ok"] = {"bool": r.random() < 0.5}
        if r.random() < 0.5:
            attrs[O + "/zone"] = {"string": r.choice(["z1", "z2"])}
        if list_types and r.random() < 0.5:
            attrs["li"] = {"ints": r.sample([1, 2, 3, 5, 8, -1], r.randint(1, 4))}
        if list_types and r.random() < 0.4:
            attrs["ls"] = {"strings": r.sample(["a", "b", "c", "A"], r.randint(1, 3))}
        caps = {}
        if r.random() < 0.85:
            caps["memory"] = {"value": r.choice(["80Gi", "1500m", "1.5", "100M", "0", "1e3", "2Ki", "1", "9"])}
        if r.random() < 0.5:
            caps["cores"] = {"value": r.choice(["4", "8", "1k", "500m"])}
        devs.append({"name": "d%d" % i, "attributes": attrs, "capacity": caps})
    return devs


# ---------------------------------------------------------------------------
# Expressions: gen(r, type, depth) gives an expression of (mostly) that type;
# a few are deliberately ill-typed so that compile errors are compared too.

A = "device.attributes['%s']" % D
C = "device.capacity['%s']" % D


def pick(r, *alts):
    return r.choice(alts)


def g_int(r, d):
    alts = [
        lambda: str(r.choice([0, 1, 2, -1, 3, 42, 9223372036854775807])),
        lambda: "int('%s')" % r.choice(["+5", "-0", "12", "+-1", "0x10", "1_0", " 1", "9223372036854775808", "+0"]),
        lambda: "int(%s)" % r.choice(["1.9", "-1.5", "1e19", "'7'", "2u", "true"]),
        lambda: "'%s'.indexOf('%s', %d)" % (r.choice(["abc", "", "aXa"]), r.choice(["a", "", "X"]), r.randint(-1, 5)),
        lambda: "'%s'.lastIndexOf('%s', %d)" % (r.choice(["abc", "", "aXa"]), r.choice(["a", "", "X"]), r.randint(-1, 5)),
        lambda: "semver('%s').%s()" % (r.choice(["1.2.3", "18446744073709551615.0.0", "9223372036854775808.1.2",
                                                 "1.18446744073709551615.0", "0.0.18446744073709551616"]),
                                        r.choice(["major", "minor", "patch"])),
        lambda: "%s.size()" % g_list(r, d + 1),
        lambda: "%s.size()" % g_str(r, d + 1),
        lambda: "%s.compareTo(%s)" % (g_qty(r, d + 1), g_qty(r, d + 1)),
        lambda: "%s.asInteger()" % g_qty(r, d + 1),
        lambda: "sign(%s)" % g_qty(r, d + 1),
        lambda: "[3, 1, 2].sort()[%d]" % r.randint(0, 3),
        lambda: "lists.range(%d).last().orValue(-1)" % r.randint(0, 4),
        lambda: "[%s].first().orValue(0)" % ", ".join(str(r.randint(0, 9)) for _ in range(r.randint(0, 3))),
        lambda: "[1, 2, 3].sortBy(x, -x)[0]",
        lambda: "%s + %s" % (g_int(r, d + 1), g_int(r, d + 1)),
        lambda: "%s.index" % A,
        lambda: "%s.?index.orValue(0)" % A,
    ]
    return r.choice(alts)() if d < 4 else str(r.randint(-2, 5))


def g_uint(r, d):
    return pick(r, "1u", "0u", "18446744073709551615u", "uint('%s')" % r.choice(["5", "+5", "-1", "18446744073709551615"]),
                "uint(%s)" % r.choice(["1.5", "-0.5", "1e20", "3"]))


def g_double(r, d):
    alts = [
        lambda: r.choice(["1.5", "0.0", "-0.0", "1e10", "2.0", "1e-7", "123456789.125", "1e300", "0.1"]),
        lambda: "double('%s')" % r.choice(["1_000.5", "1_0", "+1.5", "inf", "-Inf", "NaN", "0x1p-2", "1e", "1__0", "_1",
                                          ".5", "1.", "1e+3", "infinity", "0x10", "1_000_000"]),
        lambda: "double(%s)" % r.choice(["1", "2u", "'3'"]),
        lambda: "%s.asApproximateFloat()" % g_qty(r, d + 1),
    ]
    return r.choice(alts)() if d < 4 else "1.5"


def g_str(r, d):
    alts = [
        lambda: r.choice(["'a'", "'A'", "''", "'b-1'", "'x y'", "'GPU-9'", "'%'", "'1.2.3'"]),
        lambda: "%s.model" % A,
        lambda: "%s.?model.orValue('none')" % A,
        lambda: "device.driver",
        lambda: "'%s'.format([%s])" % (r.choice(["%e", "%f", "%.2f", "%.0e", "%s", "%d", "%x", "%o", "%b", "%.3e", "%X"]),
                                        g_any_arg(r, d + 1)),
        lambda: "'%s'.format([%s, %s])" % (r.choice(["%s %s", "%d-%s", "%s", "%s %s %s", "%s%d"]),
                                            g_any_arg(r, d + 1), g_any_arg(r, d + 1)),
        lambda: "'%s'.format(%s)" % (r.choice(["%s", "%d", "%s %s"]), g_list(r, d + 1)),
        lambda: "string(%s)" % r.choice([g_double(r, d + 1), g_int(r, d + 1), "1u", "true", "b'ab'"]),
        lambda: "%s + %s" % (g_str(r, d + 1), g_str(r, d + 1)),
        lambda: "%s.upperAscii()" % g_str(r, d + 1),
        lambda: "%s.join('%s')" % (r.choice(["['a', 'b']", "[]", "['x']"]), r.choice([",", ""])),
        lambda: "%s['%s']" % (g_map(r, d + 1), r.choice(["a", "b"])),
        lambda: "%s.%s.orValue('none')" % (A, r.choice(["?model", "?zone"])),
        lambda: "device.attributes['%s'].zone" % O,
    ]
    return r.choice(alts)() if d < 4 else "'s'"


def g_any_arg(r, d):
    """A format argument of any type."""
    return r.choice([
        lambda: g_double(r, d), lambda: g_int(r, d), lambda: g_str(r, d), lambda: g_uint(r, d),
        lambda: g_list(r, d), lambda: g_map(r, d), lambda: "null", lambda: "true",
        lambda: "%s.model" % A, lambda: "%s.index" % A, lambda: "b'ab'",
        lambda: "dyn(%s)" % g_double(r, d), lambda: g_qty(r, d), lambda: g_ver(r, d),
    ])()


def g_qty(r, d):
    alts = [
        lambda: "quantity('%s')" % r.choice(["1", "1.5", "1000m", "1Gi", "1.5Gi", "100M", "0.2G", "200M", "1e3",
                                            "9223372036854775807", "9223372036854775808", "1Ki", "-1", "0", "1.0",
                                            "5E-2", "1n", "123456789012345678901234567890"]),
        lambda: "%s.memory" % C,
        lambda: "%s.?cores.orValue(quantity('0'))" % C,
        lambda: "%s.add(%s)" % (g_qty(r, d + 1), r.choice(["1", "quantity('1m')", "-5"])),
        lambda: "%s.sub(%s)" % (g_qty(r, d + 1), r.choice(["1", "quantity('1Gi')"])),
    ]
    return r.choice(alts)() if d < 4 else "quantity('1')"


def g_ver(r, d):
    alts = [
        lambda: "semver('%s')" % r.choice(["1.2.3", "1.2.3-alpha", "1.2.3+b", "10.0.0", "0.0.0", "1.2.3-rc.10"]),
        lambda: "semver('%s', true)" % r.choice(["v1.2", "1", "01.2.3", "v1.2.3-rc"]),
        lambda: "%s.ver" % A,
        lambda: "%s.?ver.orValue(semver('0.0.0'))" % A,
    ]
    return r.choice(alts)() if d < 4 else "semver('1.0.0')"


def g_list(r, d):
    alts = [
        lambda: "[%s]" % ", ".join(g_int(r, d + 1) for _ in range(r.randint(0, 3))),
        lambda: "[%s]" % ", ".join(g_str(r, d + 1) for _ in range(r.randint(1, 3))),
        lambda: "[%s, %s]" % (g_any_arg(r, d + 1), g_any_arg(r, d + 1)),
        lambda: "[%s]" % ", ".join(r.choice(["dyn(1)", "dyn('a')", "1", "'a'", "dyn(1.5)", "null", "dyn(1u)"])
                                   for _ in range(r.randint(1, 3))),
        lambda: "%s.sort()" % r.choice(["[3, 1, 2]", "['b', 'a']", "[1.5, 0.5]", "[dyn(1), dyn('a')]", "[[1], [2]]",
                                        "[true, false]", "[semver('1.0.0')]", "[1u, 0u]", "[]"]),
        lambda: "%s.distinct()" % r.choice(["[1, 1, 2]", "['a', 'a']", "[[1], [1]]", "[dyn(1), dyn(1.0), dyn(1u)]",
                                            "[{'a': 1}, {'a': 1}]", "[1.0, 1.0]"]),
        lambda: "%s.sortBy(x, %s)" % (r.choice(["[3, 1, 2]", "['b', 'a']", "[1.5]"]), r.choice(["x", "-x", "'k'", "[x]"])),
        lambda: "lists.range(%d)" % r.randint(0, 5),
        lambda: "%s.map(x, %s)" % (r.choice(["[1, 2]", "['a']"]), r.choice(["x", "[x]", "x + x"])),
        lambda: "[1, 2, 3].slice(%d, %d)" % (r.randint(0, 3), r.randint(0, 4)),
        lambda: "[[1, 2], [3]].flatten()",
        lambda: "%s.li" % A,
        lambda: "%s.ls" % A,
    ]
    return r.choice(alts)() if d < 4 else "[1]"


def g_map(r, d):
    alts = [
        lambda: "{'a': %s}" % g_int(r, d + 1),
        lambda: "{'a': 1, 'a': 2}",
        lambda: "{'a': 1, %s: 2}" % r.choice(["'a'", "'b'", "dyn('a')", "1", "dyn(1)"]),
        lambda: "{%s: 'x'}" % r.choice(["1", "1u", "1.5", "true", "'k'", "null", "dyn(1.0)", "[1]"]),
        lambda: "{1: 'a', %s: 'b'}" % r.choice(["1u", "dyn(1u)", "dyn(1.0)", "2", "1"]),
        lambda: "{'a': %s, 'b': %s}" % (g_any_arg(r, d + 1), g_any_arg(r, d + 1)),
        lambda: "{'a': 1}.transformMap(k, v, v + 1)",
    ]
    return r.choice(alts)() if d < 4 else "{'a': 1}"


def g_val(r, d):
    return r.choice([g_int, g_uint, g_double, g_str, g_qty, g_ver, g_list, g_map,
                     lambda r, d: r.choice(["null", "true", "dyn(%s)" % g_any_arg(r, d), "%s.ok" % A, "%s.index" % A,
                                            "%s.ver" % A, "%s.model" % A])])(r, d)


def g_bool(r, d):
    if d >= 4:
        return r.choice(["true", "false", "%s.?ok.orValue(false)" % A])
    alts = [
        # (heterogeneous) equality and ordering
        lambda: "%s %s %s" % (g_val(r, d + 1), r.choice(["==", "!=", "==", "<", ">="]), g_val(r, d + 1)),
        lambda: "%s %s %s" % (g_val(r, d + 1), r.choice(["==", "!="]), g_val(r, d + 1)),
        lambda: "dyn(%s) %s %s" % (g_val(r, d + 1), r.choice(["==", "!="]), g_val(r, d + 1)),
        lambda: "%s %s %s" % (g_int(r, d + 1), r.choice(["==", "<", ">", "!="]),
                              r.choice([g_uint(r, d + 1), g_double(r, d + 1), g_int(r, d + 1)])),
        lambda: "%s == %s" % (g_str(r, d + 1), g_str(r, d + 1)),
        lambda: "%s %s %s" % (g_qty(r, d + 1), r.choice(["==", "!="]), g_qty(r, d + 1)),
        lambda: "%s.%s(%s)" % (g_qty(r, d + 1), r.choice(["isGreaterThan", "isLessThan"]), g_qty(r, d + 1)),
        lambda: "%s.isInteger()" % g_qty(r, d + 1),
        lambda: "%s %s %s" % (g_ver(r, d + 1), r.choice(["==", "!="]), g_ver(r, d + 1)),
        lambda: "%s.%s(%s)" % (g_ver(r, d + 1), r.choice(["isGreaterThan", "isLessThan"]), g_ver(r, d + 1)),
        lambda: "%s in %s" % (g_val(r, d + 1), g_list(r, d + 1)),
        lambda: "%s in %s" % (r.choice(["'a'", "1", "dyn(1.0)", "1.5", "[1]", "{'a': 1}"]), g_map(r, d + 1)),
        lambda: "%s %s %s" % (g_list(r, d + 1), r.choice(["==", "!="]), g_list(r, d + 1)),
        lambda: "%s %s %s" % (g_map(r, d + 1), r.choice(["==", "!="]), g_map(r, d + 1)),
        lambda: "%s && %s" % (g_bool(r, d + 1), g_bool(r, d + 1)),
        lambda: "%s || %s" % (g_bool(r, d + 1), g_bool(r, d + 1)),
        lambda: "!(%s)" % g_bool(r, d + 1),
        lambda: "(%s ? %s : %s)" % (g_bool(r, d + 1), g_bool(r, d + 1), g_bool(r, d + 1)),
        lambda: "%s.%s(x, %s)" % (g_list(r, d + 1), r.choice(["all", "exists", "exists_one"]),
                                  r.choice(["x == 1", "x == 'a'", "x > 0", "x != null", "type(x) == int"])),
        lambda: "%s.all(k, v, %s)" % (g_map(r, d + 1), r.choice(["v == 1", "k == 'a'", "v != null"])),
        lambda: "%s.isSorted()" % g_list(r, d + 1),
        lambda: "has(%s.%s)" % (A, r.choice(["model", "index", "li", "nosuch"])),
        lambda: "%s.ok" % A,
        lambda: "%s.%s(%s)" % (g_str(r, d + 1), r.choice(["startsWith", "contains", "matches"]), g_str(r, d + 1)),
        lambda: "%s.includes(%s)" % (r.choice(["%s.li" % A, "%s.ls" % A, "%s.index" % A]),
                                     r.choice(["1", "'a'", "2", "dyn(1.0)"])),
        lambda: "lists.range(%d).map(i, %s).size() > 0" % (r.choice([10, 300, 1200]), r.choice(["lists.range(%d).sort()" % r.choice([100, 1000]),
                                                                                            "lists.range(%d).distinct()" % r.choice([50, 500]),
                                                                                            "[i]"])),
        lambda: "dyn(%s)" % g_bool(r, d + 1),
        lambda: "%s" % g_val(r, d + 1),
        lambda: "sets.contains(%s, %s)" % (g_list(r, d + 1), g_list(r, d + 1)),
        lambda: "%s[%s] == %s" % (g_map(r, d + 1), r.choice(["'a'", "1", "1u", "1.0", "dyn('a')", "true"]), g_val(r, d + 1)),
        lambda: "[%s].%s(x, y, %s)" % (g_val(r, d + 1), r.choice(["all", "exists"]), r.choice(["x == 0", "y == y", "x > y"])),
        # strings, optionals, bindings, sets, two-variable macros over maps
        lambda: "%s.%s == %s" % (g_str(r, d + 1), r.choice(["charAt(%d)" % r.randint(-1, 4), "substring(%d)" % r.randint(-1, 4),
                                                           "replace('a', 'b')", "trim()", "lowerAscii()",
                                                           "split('-').size()", "split('')[0]"]), g_val(r, d + 1)),
        lambda: "cel.bind(v, %s, v == v && %s)" % (g_val(r, d + 1), g_bool(r, d + 1)),
        lambda: "%s.?%s.orValue(%s) == %s" % (A, r.choice(["model", "index", "ok", "nosuch"]), g_val(r, d + 1), g_val(r, d + 1)),
        lambda: "%s.exists(k, v, %s)" % (g_map(r, d + 1), r.choice(["v == 'x'", "k == 1", "v > 0", "k in ['a']"])),
        lambda: "%s.%s(%s, %s)" % ("sets", r.choice(["equivalent", "intersects"]), g_list(r, d + 1), g_list(r, d + 1)),
        lambda: "%s.filter(x, %s).size() %s %s" % (g_list(r, d + 1), r.choice(["x > 1", "x == 'a'", "true"]),
                                                    r.choice(["==", ">"]), g_int(r, d + 1)),
        lambda: "has(%s.%s) %s %s" % (C, r.choice(["memory", "cores"]), r.choice(["&&", "||"]), g_bool(r, d + 1)),
        lambda: "[%s][?%d].hasValue()" % (g_val(r, d + 1), r.randint(0, 1)),
        lambda: "%s.%s() %s %s" % (g_list(r, d + 1), r.choice(["sum", "min", "max"]), r.choice(["==", "<"]), g_val(r, d + 1)),
        lambda: "%s.indexOf(%s) == %s" % (g_list(r, d + 1), g_val(r, d + 1), g_int(r, d + 1)),
    ]
    return r.choice(alts)()


# ---------------------------------------------------------------------------
# Running both sides


def yq(s):
    return json.dumps(s)


def slice_yaml(devs):
    out = ["apiVersion: resource.k8s.io/v1", "kind: ResourceSlice", "metadata: {name: s1}", "spec:",
           "  driver: %s" % D, "  nodeName: node-a", "  pool: {name: p, generation: 1, resourceSliceCount: 1}",
           "  devices:"]
    for dv in devs:
        out.append("  - name: %s" % dv["name"])
        if dv["attributes"]:
            out.append("    attributes:")
            for k, v in dv["attributes"].items():
                out.append("      %s: %s" % (yq(k), json.dumps(v)))
        if dv["capacity"]:
            out.append("    capacity:")
            for k, v in dv["capacity"].items():
                out.append("      %s: %s" % (yq(k), json.dumps(v)))
    return "\n".join(out) + "\n"


def claims_yaml(exprs):
    out = ["---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: dc}\nspec: {}"]
    for i, e in enumerate(exprs):
        out.append("---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c%d, namespace: ns}\n"
                   "spec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n        deviceClassName: dc\n"
                   "        allocationMode: All\n        adminAccess: true\n        selectors:\n"
                   "        - cel: {expression: %s}" % (i, yq(e)))
    return "\n".join(out) + "\n"


def upstream_outcome(c):
    err = c.get("error", "")
    if not err:
        return ("match", tuple(sorted(d["device"] for d in c["devices"])))
    if "CEL compile error" in err:
        return ("compile", err)
    if "CEL runtime error" in err or "actual cost limit exceeded" in err:
        return ("runtime", err)
    if err == "cannot allocate all claims":
        return ("match", ())
    return ("other", err)


def devplane_outcome(line, names):
    if line.startswith("C "):
        return ("compile", line[2:])
    flags, _, msg = line.partition(" ")
    if "E" in flags:
        return ("runtime", msg)
    return ("match", tuple(sorted(n for n, f in zip(names, flags) if f == "T")))


def run_batch(tmp, oracle, evaluator, devs, exprs, list_types):
    sp = os.path.join(tmp, "slice.yaml")
    with open(sp, "w") as f:
        f.write(slice_yaml(devs))
    ep = os.path.join(tmp, "exprs.txt")
    with open(ep, "w") as f:
        f.write("\n".join(exprs) + "\n")
    cp = os.path.join(tmp, "cluster.yaml")
    with open(cp, "w") as f:
        f.write(slice_yaml(devs) + claims_yaml(exprs))
    feats = "all" if list_types else "AdminAccess,ConsumableCapacity,DeviceBindingAndStatus,DeviceTaints,PartitionableDevices,PrioritizedList"
    up = subprocess.run([oracle, "-features", feats, "-pretty=false", "-timeout", "60s", cp],
                        capture_output=True, text=True, timeout=600)
    if up.returncode != 0:
        raise RuntimeError("upstream failed: %s" % up.stderr)
    ucl = json.loads(up.stdout)["claims"]
    args = [evaluator, sp, ep] + (["--list-type-attributes"] if list_types else [])
    dp = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if dp.returncode != 0:
        raise RuntimeError("cel-diff-eval failed: %s" % dp.stderr)
    lines = dp.stdout.rstrip("\n").split("\n")
    assert len(lines) == len(exprs) == len(ucl), (len(lines), len(exprs), len(ucl))
    names = [d["name"] for d in devs]
    return [(upstream_outcome(u), devplane_outcome(l, names)) for u, l in zip(ucl, lines)]


def same(u, d):
    if u[0] != d[0]:
        return False
    return u[0] != "match" or u[1] == d[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--evaluator", help="the cel-diff-eval program (default: DP_BUILD_DIR/tests/cel-diff-eval)")
    ap.add_argument("--version", default="1.36.2")
    ap.add_argument("--show", type=int, default=40)
    ap.add_argument("--keep")
    a = ap.parse_args()
    shared = os.environ.get("DP_SHARED_DIR")
    build = os.environ.get("DP_BUILD_DIR")
    xzp = os.path.join(shared or "", "tools", "upstream-dra", "dra-oracle-v%s.xz" % a.version)
    if not shared or not os.path.exists(xzp):
        print("SKIP: no upstream allocator at DP_SHARED_DIR/tools/upstream-dra")
        return 0
    evaluator = a.evaluator or os.path.join(build or "", "tests", "cel-diff-eval")
    if not os.access(evaluator, os.X_OK):
        print("FAIL: %s is not built (cmake --build ... --target cel-diff-eval)" % evaluator)
        return 1
    tmp = a.keep or tempfile.mkdtemp(prefix="cel-diff.")
    os.makedirs(tmp, exist_ok=True)
    oracle = os.path.join(tmp, "dra-oracle")
    with lzma.open(xzp) as src, open(oracle, "wb") as dst:
        dst.write(src.read())
    os.chmod(oracle, stat.S_IRWXU)

    r = random.Random(a.seed)
    total = agree = known = 0
    kinds = {}
    shown = 0
    done = 0
    while done < a.count:
        # DRAListTypeAttributes exists from 1.36 on
        list_types = r.random() < 0.5 and not a.version.startswith("1.35")
        devs = gen_devices(r, list_types)
        n = min(a.batch, a.count - done)
        exprs = []
        while len(exprs) < n:
            e = g_bool(r, 0)
            if len(e) < 2000:
                exprs.append(e)
        for e, (u, d) in zip(exprs, run_batch(tmp, oracle, evaluator, devs, exprs, list_types)):
            total += 1
            kinds[u[0]] = kinds.get(u[0], 0) + 1
            if same(u, d):
                agree += 1
                continue
            if any(k(e, u, d) for k in KNOWN):
                known += 1
                if shown < a.show:
                    shown += 1
                    print("KNOWN [%s] %s\n  upstream: %s\n  devplane: %s" % ("lists" if list_types else "nolists", e, u, d))
                continue
            if shown < a.show:
                shown += 1
                print("DIFF [%s] %s\n  upstream: %s\n  devplane: %s" % ("lists" if list_types else "nolists", e, u, d))
        done += n
    print("selectors %d: agree %d (%.2f%%), documented upstream deviations %d, differences %d; upstream outcomes %s"
          % (total, agree, 100.0 * agree / total, known, total - agree - known, json.dumps(kinds, sort_keys=True)))
    return 0 if total - agree - known == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
