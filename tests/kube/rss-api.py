# SPDX-License-Identifier: Apache-2.0
"""Resident memory of `devplane agent`: V1 only, --dra publishing to a
directory, and --dra with the API client (docs/deploy.md quotes its output).
Usage, with a build without sanitizers:
    python3 tests/kube/rss-api.py build/<dir>/devplane
Each line: three runs, VmRSS, RssFile (mapped files: the binary and its
shared libraries) and VmHWM once the agent serves (V1) or the slices are
published (to a directory, or to tests/kube/fakeapi.py over HTTPS), and the
number of shared objects mapped."""
import os, sys, subprocess, tempfile, re
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakeapi import FakeAPI
DEV = sys.argv[1]
def run(profile, mode):
    t = tempfile.mkdtemp(prefix="dp-rss.")
    api = FakeAPI("tok", "node-a", "uid-a", t); port = api.start()
    kc = os.path.join(t, "kc")
    open(kc, "w").write("current-context: c\nclusters: [{name: k, cluster: {server: 'https://127.0.0.1:%d', certificate-authority: %s}}]\nusers: [{name: u, user: {token: tok}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n" % (port, api.ca))
    args = [DEV, "agent", "--profile", profile, "--node-name", "node-a"] + sum([["--%s" % k, os.path.join(t, k)] for k in ("registry-dir", "plugins-dir", "cdi-dir", "state-dir", "plugin-dir")], [])
    if mode == "api": args += ["--dra", "--kubeconfig", kc]
    elif mode == "dra": args += ["--dra", "--slices-dir", os.path.join(t, "slices")]
    p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    pat = {"api": "ResourceSlices of node-a published", "dra": "ResourceSlices generation 1", "v1": "serving "}[mode]
    for line in p.stderr:
        if pat in line: break
    st = open("/proc/%d/status" % p.pid).read()
    libs = {l.split()[-1] for l in open("/proc/%d/maps" % p.pid) if ".so" in l.split()[-1]}
    f = lambda k: int(re.search(r"%s:\s+(\d+)" % k, st).group(1))
    p.terminate(); p.wait(); api.stop(); subprocess.run(["rm", "-rf", t])
    return f("VmRSS"), f("RssFile"), f("VmHWM"), len(libs), len(api.log)
for prof in ("example-gpu", "a100-mixed"):
    for mode in ("v1", "dra", "api"):
        r = [run(prof, mode) for _ in range(3)]
        print("%-12s %-3s VmRSS %s KiB, RssFile %s KiB, VmHWM %s KiB, %d shared objects, API requests %d" % (prof, mode, sorted(x[0] for x in r), sorted(x[1] for x in r), sorted(x[2] for x in r), r[0][3], r[0][4]))
