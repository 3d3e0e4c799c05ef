# SPDX-License-Identifier: Apache-2.0
"""Resident memory of `devplane agent --dra` with and without the API
client (docs/deploy.md quotes its output). Usage, with a build without
sanitizers:  python3 tests/kube/rss-api.py build/<dir>/devplane
Each line: three runs, VmRSS and VmHWM once the slices are published
(to a directory, or to tests/kube/fakeapi.py over HTTPS)."""
import os, sys, subprocess, tempfile, re
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakeapi import FakeAPI
DEV = sys.argv[1]
def run(profile, api_on):
    t = tempfile.mkdtemp(prefix="dp-rss.")
    api = FakeAPI("tok", "node-a", "uid-a", t); port = api.start()
    kc = os.path.join(t, "kc")
    open(kc, "w").write("current-context: c\nclusters: [{name: k, cluster: {server: 'https://127.0.0.1:%d', certificate-authority: %s}}]\nusers: [{name: u, user: {token: tok}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n" % (port, api.ca))
    args = [DEV, "agent", "--dra", "--profile", profile, "--node-name", "node-a"] + sum([["--%s" % k, os.path.join(t, k)] for k in ("registry-dir", "plugins-dir", "cdi-dir", "state-dir", "plugin-dir")], [])
    if api_on: args += ["--kubeconfig", kc]
    else: args += ["--slices-dir", os.path.join(t, "slices")]
    p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    pat = "ResourceSlices of node-a published" if api_on else "ResourceSlices generation 1"
    for line in p.stderr:
        if pat in line: break
    st = open("/proc/%d/status" % p.pid).read()
    rss = re.search(r"VmRSS:\s+(\d+)", st).group(1); hwm = re.search(r"VmHWM:\s+(\d+)", st).group(1)
    p.terminate(); p.wait(); api.stop(); subprocess.run(["rm", "-rf", t])
    return int(rss), int(hwm), len(api.log)
for prof in ("example-gpu", "a100-mixed"):
    for on in (False, True):
        r = [run(prof, on) for _ in range(3)]
        print("%-12s api=%-5s VmRSS %s KiB, VmHWM %s KiB, API requests %d" % (prof, on, sorted(x[0] for x in r), sorted(x[1] for x in r), r[0][2]))
