#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare-allocate — `devplane allocate` output byte for byte, before and after.

Runs two `devplane` binaries (OLD, NEW) on the same inputs and compares stdout,
stderr and exit status:
  - every case of tests/alloc/cases written out as plain objects (its `include`
    fixtures, then its objects), once as a YAML stream and once as a kubectl
    JSON List;
  - bad inputs made from one case (unknown fields, wrong types, duplicate keys,
    a syntax error, an unknown kind, a bad apiVersion, ...);
  - examples/*.yaml and any extra files given;
with `allocate -o json|yaml|table`, `--details`, `--max-steps 1000`, `--node`
(the first node of the input) and the DRADeviceCompatibilityGroups gate off;
and `simulate -o json|yaml` of examples/*.yaml.
Usage: compare-allocate.py OLD NEW [EXTRA_INPUT...]
Prints each difference and a summary; exit 1 on any difference.
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "tests", "alloc", "cases")

BAD = {
    "unknown-device-field": ("    capacity:", "    bogusField: 1\n    capacity:"),
    "attribute-type": ("int: 0", "int: [1]"),
    "api-version": ("resource.k8s.io/v1\n", "resource.k8s.io/v9\n"),
    "count-string": ("count: 3", "count: \"one\""),
    "node-name": ("name: node-a\n", "name: Node_A!\n"),
    "duplicate-device": ("name: gpu-1\n", "name: gpu-0\n"),
    "unknown-top-field": ("kind: ResourceClaim\n", "kind: ResourceClaim\nfoo: 1\n"),
    "duplicate-key": ("kind: ResourceClaim\n", "kind: ResourceClaim\nkind: ResourceClaim\n"),
    "syntax": ("kind: ResourceClaim\n", "kind: [ResourceClaim\n"),
    "tab": ("kind: ResourceClaim\n", "kind:\tResourceClaim\n"),
    "unknown-kind": ("kind: ResourceClaim\n", "kind: Frobnicator\n"),
}


def case_objects(path):
    with open(path) as f:
        case = yaml.safe_load(f)
    objs = []
    for inc in case.get("include") or []:
        with open(os.path.join(CASES, inc)) as f:
            for d in yaml.safe_load_all(f):
                if isinstance(d, dict) and "objects" in d:
                    objs.extend(d["objects"] or [])
                elif isinstance(d, list):
                    objs.extend(d)
                elif d is not None:
                    objs.append(d)
    objs.extend(case.get("objects") or [])
    return objs


def first_node(objs):
    for o in objs:
        if o.get("kind") == "Node":
            return o.get("metadata", {}).get("name")
        if o.get("kind") == "ResourceSlice" and o.get("spec", {}).get("nodeName"):
            return o["spec"]["nodeName"]
    return "node-a"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old, new = sys.argv[1], sys.argv[2]
    runs = differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []  # (path, node)
        base = None
        for name in sorted(os.listdir(CASES)):
            if not name.endswith(".yaml"):
                continue
            objs = case_objects(os.path.join(CASES, name))
            stem = os.path.join(tmp, name[:-5])
            with open(stem + ".yaml", "w") as f:
                yaml.safe_dump_all(objs, f, sort_keys=False)
            with open(stem + ".json", "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f, indent=2)
            node = first_node(objs)
            inputs += [(stem + ".yaml", node), (stem + ".json", node)]
            if name == "basics-first-fit-two-nodes.yaml":
                with open(stem + ".yaml") as f:
                    base = f.read()
        for bad, (a, b) in sorted(BAD.items()):
            if base and a in base:
                p = os.path.join(tmp, "bad-" + bad + ".yaml")
                with open(p, "w") as f:
                    f.write(base.replace(a, b, 1))
                inputs.append((p, "node-a"))
        examples = sorted(os.path.join(ROOT, "examples", e) for e in os.listdir(os.path.join(ROOT, "examples"))
                          if e.endswith(".yaml"))
        inputs += [(e, "node-a") for e in examples] + [(e, "node-a") for e in sys.argv[3:]]

        def run(args):
            nonlocal runs, differ
            out = []
            for b in (old, new):
                p = subprocess.run([b] + args, capture_output=True)
                out.append((p.stdout, p.stderr.replace(b.encode(), b"DEVPLANE"), p.returncode))
            runs += 1
            if out[0] != out[1]:
                differ += 1
                print("DIFF:", " ".join(args))

        for path, node in inputs:
            for o in ("json", "yaml", "table"):
                run(["allocate", "-f", path, "-o", o])
            run(["allocate", "-f", path, "--details"])
            run(["allocate", "-f", path, "--max-steps", "1000", "-o", "json"])
            run(["allocate", "-f", path, "--node", node, "-o", "json"])
            run(["allocate", "-f", path, "--feature-gates", "DRADeviceCompatibilityGroups=false", "-o", "json"])
        for e in examples:
            for o in ("json", "yaml"):
                run(["simulate", "-f", e, "-o", o])
    print(f"{runs} runs, {differ} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
