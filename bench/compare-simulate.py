#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare-simulate — placements byte for byte, before and after a change.

Runs two `devplane` binaries (OLD, NEW) on every simulate input of the
repository (examples/, tests/sched/scenarios/, the fuzz corpus of Fleet
files, tests/sched/failmalloc/; with --shared DIR also every conformance
fleet with every dra-example-driver workload) and on random clusters from
`bench-simulate --generate N --mix -s SEED`, and compares:
  - `simulate -o json`: byte-identical once the intended additions are
    removed (claim results' `driver` and `pool`, issue 12);
  - the exit status;
  - `explain` of every pod: identical up to and including kube-scheduler's
    one-line message; what follows the message for a Pending pod (per-node
    detail) is allowed to differ (issue 12/13: grouped by reason).
With --strict (for changes meant to leave every output as it was): the
`simulate` output byte for byte in json and table form, with --report the
HTML page too, and every `explain` whole; --bench-nodes N[,N...] adds the
issue-13 inputs of `bench-simulate --generate N` (explain: the first
--explain-max pods).
Usage: compare-simulate.py OLD NEW BENCH_SIMULATE [--shared DIR] [--random K]
       [--nodes N] [--explain-max M] [--strict] [--report] [--bench-nodes N,...]
Prints one line per input and a summary; exit 1 on any difference.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def strip(doc):
    def walk(x):
        if isinstance(x, dict):
            if "request" in x and "device" in x:
                x.pop("driver", None)
                x.pop("pool", None)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)
    return json.dumps(doc, indent=1)


def run(binary, args):
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=3600)
    return p.returncode, p.stdout, p.stderr


def explain_head(text):
    """Everything up to and including the "0/N nodes are available" line."""
    out = []
    for line in text.splitlines():
        out.append(line)
        if "nodes are available" in line:
            break
    return "\n".join(out)


def compare_strict(old, new, files, explain_max, report):
    args = []
    for f in files:
        args += ["-f", f]
    tmp = tempfile.mkdtemp()
    js = None
    for out in ("json", "table"):
        extra = []
        if report and out == "json":
            extra = ["--report", os.path.join(tmp, "%s.html")]
        ro, so, eo = run(old, ["simulate"] + args + ["-o", out] + [e.replace("%s", "old") for e in extra])
        rn, sn, en = run(new, ["simulate"] + args + ["-o", out] + [e.replace("%s", "new") for e in extra])
        if (ro, so, eo) != (rn, sn, en):
            return "simulate -o %s differs (exit %d vs %d)" % (out, ro, rn)
        if ro != 0:
            return None
        if out == "json":
            js = sn
        if extra:
            with open(os.path.join(tmp, "old.html"), "rb") as f1, open(os.path.join(tmp, "new.html"), "rb") as f2:
                if f1.read() != f2.read():
                    return "--report page differs"
    pods = [p["name"] for p in json.loads(js)["asWritten"]["pods"]]
    for name in pods[:explain_max]:
        if run(old, ["explain", name] + args) != run(new, ["explain", name] + args):
            return "explain %s differs" % name
    return None


def compare(old, new, files, explain_max):
    args = []
    for f in files:
        args += ["-f", f]
    ro, jo, eo = run(old, ["simulate"] + args + ["-o", "json"])
    rn, jn, en = run(new, ["simulate"] + args + ["-o", "json"])
    if ro != rn:
        return "exit %d vs %d (%s | %s)" % (ro, rn, eo.strip()[:200], en.strip()[:200])
    if ro != 0:
        return None if eo == en else "stderr differs: %r vs %r" % (eo[:200], en[:200])
    so, sn = strip(json.loads(jo)), strip(json.loads(jn))
    if so != sn:
        return "simulate -o json differs"
    pods = [p["name"] for p in json.loads(jn)["asWritten"]["pods"]]
    pending = [p for p in json.loads(jn)["asWritten"]["pods"] if p["state"] == "Pending"]
    # every pod of small inputs; the Pending ones first, then the rest, up to explain_max
    order = [p["name"] for p in pending] + [n for n in pods if n not in {p["name"] for p in pending}]
    for name in order[:explain_max]:
        ro, xo, _ = run(old, ["explain", name] + args)
        rn, xn, _ = run(new, ["explain", name] + args)
        if ro != rn:
            return "explain %s: exit %d vs %d" % (name, ro, rn)
        if explain_head(xo) != explain_head(xn):
            return "explain %s differs:\n%s\n---\n%s" % (name, explain_head(xo), explain_head(xn))
        if "nodes are available" not in xo and xo != xn:
            return "explain %s differs (not Pending):\n%s\n---\n%s" % (name, xo, xn)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("bench")
    ap.add_argument("--shared")
    ap.add_argument("--random", type=int, default=20)
    ap.add_argument("--nodes", type=int, default=12)
    ap.add_argument("--explain-max", type=int, default=40)
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--bench-nodes", default="")
    a = ap.parse_args()
    inputs = []
    for pat in ("examples/*.yaml", "tests/sched/scenarios/*.yaml", "tests/sched/failmalloc/*.yaml",
                "fuzz/corpus/fuzz-sched-fleet/*.yaml"):
        for f in sorted(glob.glob(os.path.join(ROOT, pat))):
            inputs.append((os.path.relpath(f, ROOT), [f]))
    if a.shared:
        conf = os.path.join(a.shared, "conformance", "dra-example-driver")
        fleets = sorted(glob.glob(os.path.join(ROOT, "tests/sched/conformance/fleet*.yaml")))
        wls = sorted(glob.glob(os.path.join(conf, "**", "*.yaml"), recursive=True))
        for fl in fleets:
            for wl in wls:
                inputs.append(("%s + %s" % (os.path.basename(fl), os.path.relpath(wl, conf)), [fl, wl]))
    tmp = tempfile.mkdtemp()
    for seed in range(1, a.random + 1):
        n = 2 + seed % a.nodes
        path = os.path.join(tmp, "random-%d.yaml" % seed)
        with open(path, "w") as f:
            subprocess.run([a.bench, "--generate", str(n), "--mix", "-s", str(seed), "-p", str(1 + seed % 6)],
                           stdout=f, check=True)
        inputs.append(("random seed %d, %d nodes" % (seed, n), [path]))
    for n in [int(x) for x in a.bench_nodes.split(",") if x]:
        path = os.path.join(tmp, "bench-%d.yaml" % n)
        with open(path, "w") as f:
            subprocess.run([a.bench, "--generate", str(n)], stdout=f, check=True)
        inputs.append(("bench-simulate --generate %d" % n, [path]))
    bad = 0
    for name, files in inputs:
        if a.strict:
            d = compare_strict(a.old, a.new, files, a.explain_max, a.report)
        else:
            d = compare(a.old, a.new, files, a.explain_max)
        print("%s %s%s" % ("SAME" if d is None else "DIFF", name, "" if d is None else ": " + d))
        sys.stdout.flush()
        bad += d is not None
    print("%d inputs, %d differ" % (len(inputs), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
