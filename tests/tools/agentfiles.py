# SPDX-License-Identifier: Apache-2.0
"""Shared by the tests of the agent's own files (issue 21: disk full, CDI
specs written again, one agent per directory, state files that are no
files): one `devplane agent --dra` over a temporary tree, its log as a queue
to wait on, python3-grpcio as the kubelet (helpers of test-v2-interop.py)."""
import importlib.util
import os
import signal
import socket
import subprocess
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name, file):
    s = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    m = importlib.util.module_from_spec(s)
    s.loader.exec_module(m)
    return m


fc = _load("v2failclosed", "test-v2-fail-closed.py")
it = fc.it
DEVPLANE, DRA_V1 = it.DEVPLANE, it.DRA_V1
SPEC = fc.SPEC
DIRS = ("reg", "plugins", "cdi", "slices", "claims", "st", "dp")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def metrics(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        out = {}
        for line in r.read().decode().splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out


class Tree:
    """A temporary tree and the agents started on it (stopped and removed
    by close(); on failure the log's tail is printed)."""
    def __init__(self, prefix, root=None):
        self.t = root or tempfile.mkdtemp(prefix=prefix)
        self.d = {k: os.path.join(self.t, k) for k in DIRS}
        os.makedirs(self.d["dp"], exist_ok=True)
        self.logp = os.path.join(self.t, "agent.log")
        self.log = fc.Log(self.logp)
        self.procs = []
        self.port = None
        self.reg = os.path.join(self.d["reg"], "gpu.example.com-reg.sock")
        self.v1sock = os.path.join(self.d["dp"], "devplane-example.com_gpu.sock")
        self.ckpt = os.path.join(self.d["plugins"], "gpu.example.com", "checkpoint.json")
        self.slices = os.path.join(self.d["slices"], "node-a-gpu.example.com.yaml")

    def args(self, **over):
        d = dict(self.d, **over)
        a = [DEVPLANE, "agent", "--dra", "--profile", "example-gpu", "--node-name", "node-a",
             "--registry-dir", d["reg"], "--plugins-dir", d["plugins"], "--cdi-dir", d["cdi"],
             "--slices-dir", d["slices"], "--claims-dir", d["claims"], "--state-dir", d["st"],
             "--plugin-dir", d["dp"]]
        if self.port:
            a += ["--metrics-addr", "127.0.0.1:%d" % self.port]
        return a

    def start(self, **over):
        p = self.log.start(self.args(**over))
        self.procs.append(p)
        return p

    def run(self, **over):
        """Start an agent expected to stop by itself: (exit status, output)."""
        p = subprocess.run(self.args(**over), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=30)
        return p.returncode, p.stdout

    def spec(self, uid):
        return os.path.join(self.d["cdi"], SPEC % uid)

    def channel(self):
        info = it.get_info(self.reg)
        return it.grpc.insecure_channel("unix:" + info.endpoint)

    def stop(self, p):
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0, "agent exit status %s" % p.returncode

    def close(self, ok):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if not ok:
            import sys
            sys.stderr.write(open(self.logp).read()[-6000:])
        subprocess.run(["rm", "-rf", self.t])
