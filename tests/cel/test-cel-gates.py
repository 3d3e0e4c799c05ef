#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`devplane cel` compiles a selector exactly as `devplane allocate` does, with
each feature gate on and off (issue 23: `cel --list-type-attributes` took
`dyn(true)` and `'%d'.format([attr])`, which the allocator refused). For each
selector and gate setting, both tools run on the same cluster (GPUs whose PCIe
roots are a strings list, as a driver with DRAListTypeAttributes publishes
them) and must agree on whether it compiles; where it compiles, the devices
`cel` says match are the ones an allocationMode All claim gets.

Upstream (1.36.2's compile.go): with the gate on, a result of type dyn is
accepted and attribute values are dyn (so `format()` takes them); off, they
are `any` and the result must be bool or any.
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

DEVPLANE = os.environ.get("DEVPLANE", "devplane")
A = "device.attributes['gpu.example.com']"

SLICES = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
     "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-a-gpu"},
     "spec": {"driver": "gpu.example.com", "nodeName": "node-a",
              "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
              "devices": [
                  {"name": "gpu-0", "attributes": {"numa": {"int": 0}, "model": {"string": "H100"},
                                                   "pcieRoots": {"strings": ["pci0000:00", "pci0000:20"]}}},
                  {"name": "gpu-1", "attributes": {"numa": {"int": 1}, "model": {"string": "H100"},
                                                   "pcieRoots": {"strings": ["pci0000:40"]}}}]}},
]

# (selector, compiles with the gate off, compiles with it on)
CASES = [
    ("dyn(true)", False, True),
    ("'%%d'.format([%s.numa]) == '0'" % A, False, True),
    ("%s.pcieRoots.includes('pci0000:40')" % A, True, True),
    ("%s.model == 'H100'" % A, True, True),
    ("%s.numa" % A, True, True),  # any / dyn: compiles, fails at run time
    ("%s.pcieRoots.exists(r, r == 'pci0000:20')" % A, False, True),
    ("1", False, False),
]


def outcome_cel(tmp, expr, gate):
    p = subprocess.run([DEVPLANE, "cel", expr, "-f", tmp, "-o", "json", "--feature-gates", gate],
                       capture_output=True, text=True)
    if "does not compile" in p.stderr:
        return "compile error"
    if p.returncode not in (0, 1):
        return "exit %d: %s" % (p.returncode, p.stderr.strip())
    devs = json.loads(p.stdout)["devices"]
    if any(d.get("error") for d in devs):
        return "runtime error"
    return sorted(d["device"].split("/")[-1] for d in devs if d.get("matches"))


def outcome_allocate(tmp, expr, gate):
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "c", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "all", "exactly": {
                 "deviceClassName": "gpu.example.com", "allocationMode": "All",
                 "selectors": [{"cel": {"expression": expr}}]}}]}}}
    path = tmp + ".claim.yaml"
    with open(path, "w") as f:
        yaml.safe_dump(claim, f)
    p = subprocess.run([DEVPLANE, "allocate", "-f", tmp, "-f", path, "-o", "json", "--feature-gates", gate],
                       capture_output=True, text=True)
    if "compile" in p.stderr or "must evaluate to" in p.stderr or "ERROR: <input>" in p.stderr:
        return "compile error"
    if p.returncode == 2:
        return "runtime error"
    alloc = json.loads(p.stdout).get("status", {}).get("allocation")
    return sorted(r["device"] for r in alloc["devices"]["results"]) if alloc else []


def main():
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = os.path.join(d, "cluster.yaml")
        with open(tmp, "w") as f:
            yaml.safe_dump_all(SLICES, f)
        for expr, off, on in CASES:
            for gate, want in (("DRAListTypeAttributes=false", off), ("DRAListTypeAttributes=true", on)):
                c, a = outcome_cel(tmp, expr, gate), outcome_allocate(tmp, expr, gate)
                errs = []
                if (c != "compile error") != want:
                    errs.append("cel: %s, expected it to %scompile" % (c, "" if want else "not "))
                # without the gate every selector fails on a device with a list
                # attribute: both say so; where the allocation is decided, the
                # devices agree ([] from allocate: All found none)
                if c != a and not (c == [] and a == []):
                    errs.append("cel says %s, allocate says %s" % (c, a))
                print(("FAIL " if errs else "PASS ") + "[%s] %s" % (gate, expr))
                for e in errs:
                    print("  " + e)
                failed += bool(errs)
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
