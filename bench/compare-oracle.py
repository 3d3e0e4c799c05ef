#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare-oracle — `devplane simulate` beside the real kube-scheduler, same input.

Writes the oracle's own benchmark clusters (ksched-oracle's testdata/gen_cluster.py,
read from the shared directory at run time: 500 nodes of 64 CPUs and 256Gi, 5,000
pods of 100m, 128Mi and one GPU) in three kinds (ext: nvidia.com/gpu extended
resources; dra: one ResourceSlice per node and a ResourceClaimTemplate per pod;
mixed: half of each, alternating), runs ksched-oracle (kube-scheduler 1.35 as a
program, decompressed from the shared directory into a temporary directory) and
`devplane simulate -o json` on each input RUNS times, and prints per input and
program the median CPU seconds (user + system of the child, from wait4), the
spread ((max - min) / median), the pods bound, pods bound per CPU second, and
the ratio devplane / oracle of pods per CPU second.

What each program does for that CPU time: the oracle schedules the pods once
(its default profile: filters, scores, DRA allocation, binding through a fake
API server) and exits; devplane schedules them three times (the input as
written, then every node on V1 and every node on V2, the comparison its report
prints; Node objects stay as they are in those two runs), so the ratio is
conservative by up to 3x. Both read and decode the same YAML file.

usage: compare-oracle.py [--devplane PATH] [--oracle PATH] [--shared DIR]
                         [-r RUNS] [-n NODES] [-p PODS] [--gpus N]
                         [--modes ext,dra,mixed] [--keep DIR] [--programs ksched-oracle,devplane]
Exit status 0; 2 when a program fails or the pods bound differ.
"""
import argparse
import json
import lzma
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE_XZ = "tools/kube-scheduler/ksched-oracle-v1.35.4.xz"
GEN = "tools/kube-scheduler/testdata/gen_cluster.py"


def timed(argv, out_path):
    """Run argv with stdout to out_path: (exit status, CPU s, wall s, max RSS KiB).
    CPU from wait4; the max RSS from /usr/bin/time, since a child forked from
    this Python process starts with Python's pages counted."""
    import time
    rss_path = out_path + ".rss"
    with open(out_path, "wb") as out:
        t0 = time.monotonic()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_path] + argv, stdout=out, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        sys.stderr.write(err.decode(errors="replace")[-2000:])
    try:
        rss = int(open(rss_path).read().split()[-1])
    except (OSError, ValueError, IndexError):
        rss = 0
    return rc, ru.ru_utime + ru.ru_stime, wall, rss


def bound_oracle(path):
    doc = json.load(open(path))
    return sum(1 for p in doc["pods"] if p.get("node") and p.get("bound") == "scheduler"), doc.get("version", "?")


def bound_devplane(path):
    doc = json.load(open(path))
    return sum(1 for p in doc["asWritten"]["pods"] if p.get("node"))


def version(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devplane", default=os.path.join(ROOT, "build/rel/devplane"))
    ap.add_argument("--oracle")
    ap.add_argument("--shared", default=os.environ.get("DP_SHARED_DIR", os.path.join(ROOT, "../shared")))
    ap.add_argument("-r", "--runs", type=int, default=3)
    ap.add_argument("-n", "--nodes", type=int, default=500)
    ap.add_argument("-p", "--pods", type=int, default=5000)
    ap.add_argument("--gpus", type=int, default=10)
    ap.add_argument("--modes", default="ext,dra,mixed")
    ap.add_argument("--keep")
    ap.add_argument("--programs", default="ksched-oracle,devplane",
                    help="which to run (one side again after a change; the ratio needs both)")
    args = ap.parse_args()
    tmp = args.keep or tempfile.mkdtemp(prefix="compare-oracle-")
    os.makedirs(tmp, exist_ok=True)
    try:
        if not args.oracle and "ksched-oracle" in args.programs:
            xz = os.path.join(args.shared, ORACLE_XZ)
            if not os.path.exists(xz):
                sys.exit(f"compare-oracle: {xz} not found (--shared DIR or --oracle PATH)")
            args.oracle = os.path.join(tmp, "ksched-oracle")
            with lzma.open(xz) as src, open(args.oracle, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.chmod(args.oracle, 0o755)
        dv = version([args.devplane, "--version"])
        ov = version([args.oracle, "--version"]) if args.oracle else "(not run)"
        print(f"compare-oracle: {args.nodes} nodes, {args.pods} pods, {args.gpus} GPUs per node, "
              f"{args.runs} run(s) each; {dv}; ksched-oracle {ov}; {os.cpu_count()} CPUs, "
              f"load {os.getloadavg()[0]:.1f}")
        rows = []
        bad = False
        hdr = ("input", "program", "CPU s (median)", "spread", "bound", "pods/CPU-s", "max RSS MiB", "ratio")

        def cells(mode, res):
            o = res.get("ksched-oracle")
            for prog, (med, spread, bound, pps, rss) in res.items():
                ratio = f"{pps / o[3]:.0f}x" if prog == "devplane" and o and o[3] else ""
                yield (mode, prog, f"{med:.2f}", f"{spread * 100:.0f} %", str(bound), f"{pps:,.0f}",
                       f"{rss / 1024:,.0f}", ratio)

        for mode in args.modes.split(","):
            inp = os.path.join(tmp, f"cluster-{mode}.yaml")
            subprocess.run([sys.executable, os.path.join(args.shared, GEN), str(args.nodes), str(args.pods), inp,
                            f"--gpus-per-node={args.gpus}", f"--mode={mode}"], check=True)
            res = {}
            for prog, argv, count in (
                    ("ksched-oracle", [args.oracle, "--pretty=false", "--timeout", "1800s", "-f", inp], lambda p: bound_oracle(p)[0]),
                    ("devplane", [args.devplane, "simulate", "-f", inp, "-o", "json"], bound_devplane)):
                if prog not in args.programs.split(","):
                    continue
                cpu, rss, bound = [], [], None
                for i in range(args.runs):
                    out = os.path.join(tmp, f"{mode}-{prog}-{i}.json")
                    rc, c, _, m = timed(argv, out)
                    if rc != 0:  # the oracle's 1: not quiescent in time
                        print(f"{mode}: {prog} exit {rc}")
                        bad = True
                        break
                    cpu.append(c)
                    rss.append(m)
                    bound = count(out)
                if not cpu:
                    continue
                med = statistics.median(cpu)
                res[prog] = (med, (max(cpu) - min(cpu)) / med if med else 0.0, bound, bound / med if med else 0.0,
                             max(rss))
            if len(res) == 2 and res["devplane"][2] != res["ksched-oracle"][2]:
                print(f"{mode}: pods bound differ: devplane {res['devplane'][2]}, oracle {res['ksched-oracle'][2]}")
                bad = True
            rows.append((mode, res))
            for c in cells(mode, res):  # as it comes (the oracle's DRA runs take minutes)
                print("  " + "  ".join(c), flush=True)
        table = [hdr]
        for mode, res in rows:
            table.extend(cells(mode, res))
        w = [max(len(r[i]) for r in table) for i in range(len(hdr))]
        for r in table:
            print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
        return 2 if bad else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
