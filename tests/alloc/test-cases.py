#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Table-driven allocator cases: tests/alloc/cases/*.yaml, run through the
real `devplane allocate`.

A case file holds:
  description: what it shows (one line)
  include: [fixtures/x.yaml, ...]   objects shared by several cases
  objects: [...]                    Kubernetes objects of this case
  args: [--node, node-a]            extra arguments (optional)
  details: false                    run without --details (the per-node reason
                                    lines; by default they are asked for)
  repeat: N                         run N times, output must be byte-identical
  expect:
    exit: 0 | 1 | 2
    allocated: {claim: ["request=driver/pool/device", ...]}   exact, in order
    node: {claim: node}
    unallocated: [claim, ...]
    stderr: ["substring", ...]      each must appear in stderr
    stderr_lacks: ["substring", ...] none may appear in stderr
    stdout_empty: true              (exit 2: nothing printed)
    allocation: {claim: {...}}      subset that status.allocation must contain
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DEVPLANE = os.environ.get("DEVPLANE", "devplane")


def subset(want, got, path):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{path}: expected a map, got {got!r}"
        for k, v in want.items():
            if k not in got:
                return f"{path}.{k}: missing (have {sorted(got)})"
            e = subset(v, got[k], f"{path}.{k}")
            if e:
                return e
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return f"{path}: expected {want!r}, got {got!r}"
        for i, (w, g) in enumerate(zip(want, got)):
            e = subset(w, g, f"{path}[{i}]")
            if e:
                return e
        return None
    return None if want == got else f"{path}: expected {want!r}, got {got!r}"


def run_case(path):
    with open(path) as f:
        case = yaml.safe_load(f)
    objs = []
    for inc in case.get("include", []):
        with open(os.path.join(os.path.dirname(path), inc)) as f:
            objs.extend(d for d in yaml.safe_load_all(f) if d)
    objs.extend(case.get("objects", []))
    exp = case.get("expect", {})
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "input.yaml")
        with open(inp, "w") as f:
            yaml.safe_dump_all(objs, f, sort_keys=False)
        cmd = [DEVPLANE, "allocate", "-f", inp, "-o", "json"] + [str(a) for a in case.get("args", [])]
        if case.get("details", True):
            cmd.append("--details")
        first = None
        for _ in range(int(case.get("repeat", 1))):
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            if first is None:
                first = p
            elif p.stdout != first.stdout or p.stderr != first.stderr:
                return "output differs between repeated runs"
        p = first
    errs = []
    want_exit = exp.get("exit", 0)
    if p.returncode != want_exit:
        errs.append(f"exit {p.returncode}, expected {want_exit}\nstderr: {p.stderr}")
    for s in exp.get("stderr", []):
        if s not in p.stderr:
            errs.append(f"stderr lacks {s!r}\nstderr: {p.stderr}")
    for s in exp.get("stderr_lacks", []):
        if s in p.stderr:
            errs.append(f"stderr has {s!r}\nstderr: {p.stderr}")
    if exp.get("stdout_empty") and p.stdout:
        errs.append(f"stdout not empty: {p.stdout[:200]}")
    if p.returncode in (0, 1) and p.stdout:
        doc = json.loads(p.stdout)
        items = doc["items"] if doc.get("kind") == "List" else [doc]
        claims = {c["metadata"]["name"]: c for c in items}
        for name, devs in exp.get("allocated", {}).items():
            c = claims.get(name)
            alloc = (c or {}).get("status", {}).get("allocation")
            if not alloc:
                errs.append(f"{name}: not allocated\nstderr: {p.stderr}")
                continue
            got = [f"{r['request']}={r['driver']}/{r['pool']}/{r['device']}" for r in alloc["devices"]["results"]]
            if got != devs:
                errs.append(f"{name}: got {got}, expected {devs}")
        for name, node in exp.get("node", {}).items():
            alloc = claims.get(name, {}).get("status", {}).get("allocation", {})
            terms = alloc.get("nodeSelector", {}).get("nodeSelectorTerms", [])
            got = [v for t in terms for fld in t.get("matchFields", []) for v in fld.get("values", [])]
            if got != [node]:
                errs.append(f"{name}: node selector names {got}, expected [{node}]")
        for name in exp.get("unallocated", []):
            if claims.get(name, {}).get("status", {}).get("allocation"):
                errs.append(f"{name}: allocated, expected not")
        for name, want in exp.get("allocation", {}).items():
            e = subset(want, claims.get(name, {}).get("status", {}).get("allocation", {}), name)
            if e:
                errs.append(e)
    return "\n".join(errs) or None


def main():
    cases = sorted(f for f in os.listdir(os.path.join(HERE, "cases")) if f.endswith(".yaml"))
    only = sys.argv[1] if len(sys.argv) > 1 else None
    failed = 0
    for name in cases:
        if only and only not in name:
            continue
        err = run_case(os.path.join(HERE, "cases", name))
        print(("FAIL " if err else "PASS ") + name)
        if err:
            failed += 1
            print("  " + err.replace("\n", "\n  "))
    print(f"{len(cases) - failed if not only else 'some'} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
