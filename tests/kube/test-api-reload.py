# SPDX-License-Identifier: Apache-2.0
"""Devices that vanish leave the API server on SIGHUP (config reload).

A real kube-apiserver cannot run here; tests/kube/fakeapi.py plays it and
checks every request. `devplane agent --backend devglob --dra --kubeconfig`
exposes 3 /dev nodes (2 serial, 1 modem) x 40 shares = 120 devices, one
slice (<= 128). The modem is removed: its shares are tainted `missing`
(presence health) and the pool is re-cut at 64 devices per slice (two
slices). SIGHUP re-discovers: 80 devices, one slice, the other DELETEd, V1
advertises 80, and the generation moves on."""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakeapi import FakeAPI  # noqa: E402

DEVPLANE = os.environ["DEVPLANE"]
TOKEN = "reload-token"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def metrics(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return dict(l.rsplit(" ", 1) for l in r.read().decode().splitlines() if l and not l.startswith("#"))


def main():
    t = tempfile.mkdtemp(prefix="dp-kube-reload.")
    api = FakeAPI(TOKEN, "node-r", "uid-node-r", t)
    port = api.start()
    kc = os.path.join(t, "kc.yaml")
    with open(kc, "w") as f:
        f.write("current-context: c\nclusters: [{name: k, cluster: {server: 'https://127.0.0.1:%d', "
                "certificate-authority: %s}}]\nusers: [{name: u, user: {token: %s}}]\n"
                "contexts: [{name: c, context: {cluster: k, user: u}}]\n" % (port, api.ca, TOKEN))
    dev = os.path.join(t, "devroot", "dev")
    os.makedirs(dev)
    for n in ("ttyUSB0", "ttyUSB1", "ttyACM0"):
        open(os.path.join(dev, n), "w").close()
    with open(os.path.join(t, "backend.yaml"), "w") as f:
        f.write("apiVersion: devplane.io/v1alpha1\nkind: BackendConfig\nspec:\n  domain: example.com\n"
                "  devglob:\n  - type: serial\n    paths: [\"/dev/ttyUSB*\"]\n    count: 40\n"
                "  - type: modem\n    paths: [\"/dev/ttyACM*\"]\n    count: 40\n")
    mport = free_port()
    args = [DEVPLANE, "agent", "--backend", "devglob", "--dev-root", os.path.join(t, "devroot"),
            "--backend-config", os.path.join(t, "backend.yaml"), "--dra", "--node-name", "node-r",
            "--kubeconfig", kc, "--api-backoff-max-ms", "400", "--metrics-addr", "127.0.0.1:%d" % mport]
    for k in ("registry", "plugins", "cdi", "state", "dp"):
        args += ["--%s-dir" % {"registry": "registry", "plugins": "plugins", "cdi": "cdi", "state": "state",
                               "dp": "plugin"}[k], os.path.join(t, k)]
    lines, cond = [], threading.Condition()
    p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)

    def pump():
        for line in p.stderr:
            with cond:
                lines.append(line.rstrip("\n"))
                cond.notify_all()
    threading.Thread(target=pump, daemon=True).start()

    def wait_log(rx, since):
        with cond:
            assert cond.wait_for(lambda: any(re.search(rx, l) for l in lines[since:]), timeout=30), lines[-8:]

    def ours():
        return {n: o for n, o in api.slices.items() if o["spec"].get("nodeName") == "node-r"}

    def count():
        return sum(len(o["spec"].get("devices", [])) for o in ours().values())

    def gen():
        gens = {o["spec"]["pool"]["generation"] for o in ours().values()}
        assert len(gens) == 1, gens
        return gens.pop()
    ok = False
    try:
        api.wait(lambda: len(ours()) == 1 and count() == 120)
        g1 = gen()
        print("ok - 3 nodes (2 serial, 1 modem) x 40 shares: 120 devices in 1 slice, generation %d" % g1)
        mark = len(lines)
        os.unlink(os.path.join(dev, "ttyACM0"))
        api.wait(lambda: len(ours()) == 2 and sum(1 for o in ours().values() for d in o["spec"]["devices"]
                                                  if d.get("taints")) == 40)
        wait_log(r"ResourceSlices of node-r published: generation", mark)
        print("ok - ttyACM0 removed: its 40 shares tainted missing, pool re-cut into 2 slices (<= 64 with taints)")
        n_log, mark = len(api.log), len(lines)
        p.send_signal(signal.SIGHUP)
        wait_log(r"config reloaded: 80 device\(s\) \(were 120\)", mark)
        api.wait(lambda: len(ours()) == 1 and count() == 80 and gen() > g1)
        wait_log(r"ResourceSlices of node-r published: generation %d, 1 slice" % gen(), mark)
        deletes = [q.rsplit("/", 1)[-1] for m, q, c in api.log[n_log:] if m == "DELETE" and c == 200]
        assert deletes == ["node-r-dev.example.com-1"], api.log[n_log:]
        assert not any(d.get("taints") for o in ours().values() for d in o["spec"]["devices"])
        m = metrics(mport)
        assert m['devplane_v1_resource_devices{resource="example.com/serial",health="healthy"}'] == "80", m
        assert m['devplane_v1_resource_devices{resource="example.com/serial",health="unhealthy"}'] == "0", m
        assert not any("example.com/modem" in k for k in m), m
        print("ok - SIGHUP: devices discovered again, 80 left; slice -1 DELETEd, one slice at "
              "generation %d; V1 advertises 80 healthy serial, no modem" % gen())
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0
        assert not api.violations, api.violations
        print("ok - every request passed the fake API server's checks (%d requests)" % len(api.log))
        ok = True
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        api.stop()
        if not ok:
            sys.stderr.write("\n".join(lines[-40:]) + "\nviolations: %s\n" % api.violations)
        subprocess.run(["rm", "-rf", t])


if __name__ == "__main__":
    main()
