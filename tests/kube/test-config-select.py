# SPDX-License-Identifier: Apache-2.0
"""Per-node config selection, NVIDIA's way: deploy/configmap.yaml's configs
in a directory (as the DaemonSet mounts the ConfigMap), the node's label
nvidia.com/device-plugin.config read from the API server (tests/kube/fakeapi.py)
naming one; unlabelled, `default`. `devplane agent --config-dir --kubeconfig`
serves what the chosen config says; a label naming a config that does not
exist stops the agent with exit status 2 and says which."""
import atexit
import shutil
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakeapi import FakeAPI  # noqa: E402

DEVPLANE = os.environ["DEVPLANE"]
SRC = os.environ["DP_SOURCE_DIR"]
TOKEN = "test-token-0123456789"


def wait_line(p, pattern, timeout=60):
    buf, seen, deadline, fd = b"", [], time.monotonic() + timeout, p.stderr.fileno()
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            seen.append(line.decode(errors="replace"))
            if re.search(pattern, seen[-1]):
                return True, seen
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return False, seen
        chunk = os.read(fd, 65536)
        if not chunk:
            return False, seen
        buf += chunk


t = tempfile.mkdtemp(prefix="dp-cfgsel.")
atexit.register(shutil.rmtree, t, True)
cm = yaml.safe_load(open(os.path.join(SRC, "deploy", "configmap.yaml")))
cdir = os.path.join(t, "available-configs")
os.makedirs(cdir)
for k, v in cm["data"].items():
    with open(os.path.join(cdir, k), "w") as f:
        f.write(v)
api = FakeAPI(TOKEN, "gpu-node", "6f1c3d2e-0000-4000-8000-0000000cfgsel", t)
port = api.start()
kc = os.path.join(t, "kubeconfig")
with open(kc, "w") as f:
    f.write("apiVersion: v1\nkind: Config\ncurrent-context: test\n"
            "clusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:%d\n"
            "    certificate-authority: ca.crt\n"
            "users:\n- name: agent\n  user:\n    token: %s\n"
            "contexts:\n- name: test\n  context: {cluster: fake, user: agent}\n" % (port, TOKEN))
failures = 0
try:
    for label, want in ((None, r"serving nvidia.com/gpu: 8 devices"),
                        ("mig-mixed", r"serving nvidia.com/mig-1g.10gb: 28 devices"),
                        ("time-sliced-4", r"serving nvidia.com/gpu: 32 devices")):
        api.node_labels = {"nvidia.com/device-plugin.config": label} if label else {}
        pd = tempfile.mkdtemp(dir=t)
        p = subprocess.Popen([DEVPLANE, "agent", "--profile", "a100-mixed", "--node-name", "gpu-node", "--plugin-dir",
                              pd, "--state-dir", pd + "/st", "--kubeconfig", kc, "--config-dir", cdir],
                             stderr=subprocess.PIPE)
        ok, seen = wait_line(p, want)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=60)
        if ok and rc == 0:
            print("ok - label %s: %s" % (label or "(none)", want.split("serving ")[1]))
        else:
            failures += 1
            print("not ok - label %s: rc=%s\n%s" % (label, rc, "\n".join(seen)))
    api.node_labels = {"nvidia.com/device-plugin.config": "no-such-config"}
    r = subprocess.run([DEVPLANE, "agent", "--node-name", "gpu-node", "--plugin-dir", t + "/x", "--state-dir",
                        t + "/x/st", "--kubeconfig", kc, "--config-dir", cdir], capture_output=True, text=True,
                       timeout=60)
    if r.returncode == 2 and 'names config "no-such-config"' in r.stderr:
        print("ok - a label naming a missing config: exit 2, named")
    else:
        failures += 1
        print("not ok - missing config: rc=%d %s" % (r.returncode, r.stderr))
    assert not api.violations, api.violations
finally:
    api.stop()
sys.exit(1 if failures else 0)
