#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Small clusters, each pinning one behaviour of kube-scheduler 1.35 that the
differential harness (or a user) found devplane without: devplane against
expected outcomes that are the real kube-scheduler's.

Each case is ksched-cases/NAME.yaml (its comment says what it pins) with
NAME.expected: one line per pod, "ns/name NODE", "ns/name Preempted NODE" or
"ns/name Pending MESSAGE" (kube-scheduler's whole PodScheduled message). The
differential harness found the queue shapes (docs/scheduler.md, "Which attempt
is the last"). `devplane simulate -o json` (default profile, preemption on) must
give exactly those outcomes; when the oracle (shared tools/kube-scheduler) is
there, its run of the same file must give them too, so an expectation is never
devplane's own invention.
"""
import glob
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

ORACLE_XZ = "tools/kube-scheduler/ksched-oracle-v1.35.4.xz"
HERE = os.path.dirname(os.path.abspath(__file__))


def find_oracle(tmp):
    shared = os.environ.get("DP_SHARED_DIR") or os.path.join(HERE, "..", "..", "..", "shared")
    xz = os.path.join(shared, ORACLE_XZ)
    if not os.path.exists(xz):
        return None
    out = os.path.join(tmp, "ksched-oracle")
    with lzma.open(xz) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.chmod(out, 0o755)
    return out


def expected(path):
    want = {}
    with open(path) as f:
        for line in f:
            key, rest = line.rstrip("\n").split(" ", 1)
            want[key] = rest
    return want


def devplane_outcomes(devplane, path):
    out = subprocess.run([devplane, "simulate", "-o", "json", "-f", path], capture_output=True, text=True,
                         check=True).stdout
    got = {}
    for p in json.loads(out)["asWritten"]["pods"]:
        key = p["name"] if "/" in p["name"] else "default/" + p["name"]
        if p.get("state") == "Preempted":
            got[key] = f"Preempted {p['node']}"
        elif p.get("node") and p.get("state") in ("Running", "Waiting"):
            got[key] = p["node"]
        else:
            got[key] = "Pending " + p.get("message", p.get("reason", ""))
    return got


def oracle_outcomes(oracle, path):
    out = subprocess.run([oracle, "--pretty=false", "-f", path], capture_output=True, text=True, check=True).stdout
    got = {}
    for p in json.loads(out)["pods"]:
        key = f"{p['namespace']}/{p['name']}"
        if p.get("preempted"):
            got[key] = f"Preempted {p['node']}"
        elif p.get("node"):
            got[key] = p["node"]
        else:
            got[key] = "Pending " + p.get("message", "")
    return got


def compare(who, name, want, got):
    bad = []
    for key in sorted(set(want) | set(got)):
        if want.get(key) != got.get(key):
            bad.append(f"{name}: {who}: {key}: expected {want.get(key)!r}, got {got.get(key)!r}")
    return bad


def main():
    devplane = os.environ.get("DEVPLANE", "devplane")
    cases = sorted(glob.glob(os.path.join(HERE, "ksched-cases", "*.yaml")))
    assert cases, "no cases"
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        oracle = find_oracle(tmp)
        for path in cases:
            name = os.path.basename(path)[:-5]
            want = expected(path[:-5] + ".expected")
            bad += compare("devplane", name, want, devplane_outcomes(devplane, path))
            if oracle:
                bad += compare("kube-scheduler", name, want, oracle_outcomes(oracle, path))
    for b in bad:
        print("FAIL", b)
    print(f"{len(cases)} cases{'' if oracle else ' (no oracle: devplane only)'}, {len(bad)} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
