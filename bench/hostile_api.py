# SPDX-License-Identifier: Apache-2.0
"""The agent's sockets while its API server is hostile (issue 21, F2).

Runs `devplane agent --dra --kubeconfig` against tests/kube/fakeapi.py and,
once its ResourceSlices are published, turns every ResourceSlice watch into
one hostile body after another (each phase for a while):

  quiet        the ordinary watch (the baseline)
  long-line    a line that never ends: 20 MiB without a newline
  big-events   15 MiB events, each a whole line
  legal-events 3.5 MiB events (below the 4 MiB line cap: parsed)
  tiny-flood   tiny BOOKMARK events, as fast as the server writes them
  dense-events 3.5 MiB events of 300,000 tiny keys (parsed in one piece:
               what is left, docs/deploy.md)

Meanwhile two separate processes call the agent's V1 socket
(GetDevicePluginOptions) and DRA socket (NodePrepareResources with no
claims) in a loop, 1 ms apart. Prints per phase and socket the calls made, the median,
p99 and worst latency, and the agent's CPU seconds (user + system):

  DEVPLANE=build/release/devplane DP_SOURCE_DIR=$PWD /usr/bin/python3 bench/hostile_api.py \
      [SECONDS_PER_PHASE [PHASE...]]

tests/kube/test-hostile-api.py runs the same phases briefly and asserts
on them.
"""
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

SRC = os.environ.get("DP_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "kube"))
from fakeapi import FakeAPI  # noqa: E402

TOKEN = "bench-token-0123456789"
NODE_UID = "6f1c3d2e-0000-4000-8000-00000000node"
DRA_V1 = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
MIB = 1 << 20

# Calls one method on the socket argv[1] (request bytes argv[3], hex), one
# call a millisecond at most, until a line arrives on stdin; prints the
# latencies' summary as JSON.
PROBE = """
import json, select, sys, time, grpc
ch = grpc.insecure_channel("unix:" + sys.argv[1])
call = ch.unary_unary(sys.argv[2])
req = bytes.fromhex(sys.argv[3])
call(req, timeout=60, wait_for_ready=True)
print("ready", flush=True)
lat = []
while not select.select([sys.stdin], [], [], 0)[0]:
    t0 = time.monotonic()
    call(req, timeout=60)
    lat.append(time.monotonic() - t0)
    time.sleep(0.001)  # paced: the probes must not be the load on a small machine
lat.sort()
pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else 0.0
print(json.dumps({"n": len(lat), "median": pick(0.5), "p99": pick(0.99), "max": lat[-1] if lat else 0.0}))
"""


def event_line(size, rv=1):
    """A MODIFIED ResourceSlice event of about size bytes (one annotation
    fills it), newline included."""
    head = ('{"type":"MODIFIED","object":{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",'
            '"metadata":{"name":"other","resourceVersion":"%d","annotations":{"fill":"' % rv)
    tail = '"}},"spec":{"driver":"gpu.example.com","nodeName":"node-a","pool":{"name":"x","generation":1,' \
           '"resourceSliceCount":1}}}}\n'
    return (head + "x" * max(0, size - len(head) - len(tail)) + tail).encode()


def dense_line(size):
    """An event of about size bytes whose annotations are tiny keys: the
    most work per byte for the parser."""
    keys, n, i = [], 0, 0
    while n < size:
        k = '"k%d":"v"' % i
        keys.append(k)
        n += len(k) + 1
        i += 1
    return ('{"type":"MODIFIED","object":{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",'
            '"metadata":{"name":"other","resourceVersion":"1","annotations":{%s}},"spec":{"driver":'
            '"gpu.example.com","nodeName":"node-a","pool":{"name":"x","generation":1,"resourceSliceCount":1}}}}\n'
            % ",".join(keys)).encode()


def _long_line(write):
    write(event_line(64)[:-80])  # a plausible start, then never a newline
    block = b"x" * (64 << 10)
    for _ in range(20 * MIB // len(block)):
        write(block)


def _big_events(size, make=event_line):
    def writer(write):
        line = make(size)
        for _ in range(4):
            for off in range(0, len(line), 1 << 20):
                write(line[off:off + (1 << 20)])
    return writer


# bytes of tiny events written (the agent reads them: TCP pushes back),
# notified on every write
flood_written, flood_cond = [0], threading.Condition()


def _tiny_flood(write):
    line = b'{"type":"BOOKMARK","object":{"kind":"ResourceSlice","metadata":{"resourceVersion":"7"}}}\n'
    block = line * ((64 << 10) // len(line))
    while True:
        write(block)
        with flood_cond:
            flood_written[0] += len(block)
            flood_cond.notify_all()


PHASES = [("quiet", None), ("long-line", _long_line), ("big-events", _big_events(15 * MIB)),
          ("legal-events", _big_events(3 * MIB + MIB // 2)), ("tiny-flood", _tiny_flood),
          ("dense-events", _big_events(3 * MIB + MIB // 2, dense_line))]


def cpu_seconds(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


class Agent:
    """The agent; its stderr lines are kept so callers can wait on them."""

    def __init__(self, devplane, t, api):
        kc = os.path.join(t, "kubeconfig")
        with open(kc, "w") as f:
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                    "clusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:%d\n"
                    "    certificate-authority: %s\n"
                    "users:\n- name: agent\n  user:\n    token: %s\n"
                    "contexts:\n- name: c\n  context: {cluster: fake, user: agent}\n" % (api.port, api.ca, TOKEN))
        d = {k: os.path.join(t, k) for k in ("reg", "plugins", "cdi", "st", "dp")}
        self.dra_sock = os.path.join(d["plugins"], "gpu.example.com", "dra.sock")
        self.v1_sock = os.path.join(d["dp"], "devplane-example.com_gpu.sock")
        args = [devplane, "agent", "--dra", "--node-name", "node-a", "--kubeconfig", kc,
                "--profile", os.path.join(SRC, "profiles", "example-gpu.yaml"),
                "--registry-dir", d["reg"], "--plugins-dir", d["plugins"], "--cdi-dir", d["cdi"],
                "--state-dir", d["st"], "--plugin-dir", d["dp"], "--api-backoff-max-ms", "1000"]
        self.lines, self.cond = [], threading.Condition()
        self.log = open(os.path.join(t, "agent.log"), "w")
        self.p = subprocess.Popen(args, stdout=self.log, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.p.stderr:
            self.log.write(line)
            self.log.flush()
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def count(self, pattern):
        rx = re.compile(pattern)
        with self.cond:
            return sum(1 for ln in self.lines if rx.search(ln))

    def wait_log(self, pattern, count=1, timeout=60):
        rx = re.compile(pattern)
        with self.cond:
            ok = self.cond.wait_for(lambda: sum(1 for ln in self.lines if rx.search(ln)) >= count, timeout=timeout)
        if not ok:
            raise AssertionError("no log line matching %r (x%d); last: %s" % (pattern, count, self.lines[-5:]))

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.log.close()


class Probe:
    def __init__(self, sock, method, req=b""):
        self.p = subprocess.Popen([sys.executable, "-c", PROBE, sock, method, req.hex()], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline().strip()
        assert line == "ready", line

    def stop(self):
        out, _ = self.p.communicate("stop\n", timeout=120)
        return json.loads(out)


def set_hostile(api, writer):
    """From now on every watch gets writer's body (None: the events); the
    watch in progress ends. Sets api.mark: requests logged after it were
    answered this way."""
    with api.lock:
        api.hostile = writer
        api.mark = len(api.log)
        api.lock.notify_all()  # an ordinary watch in progress ends


def run(devplane, seconds, phases=PHASES, on_phase=None, node_labels=None):
    """Run the phases; returns [(phase, {"v1": summary, "dra": summary,
    "cpu": seconds, "watches": n})]. on_phase(name, agent, api) runs at
    the start of each phase (after the hostile writer is set, the probes
    running); the phase lasts until it returns, and then seconds more.
    node_labels: the Node's labels (its GET answer's size)."""
    t = tempfile.mkdtemp(prefix="dp-hostile-api.")
    api = FakeAPI(TOKEN, "node-a", NODE_UID, t)
    api.node_labels = node_labels or {}
    api.start()
    agent = Agent(devplane, t, api)
    results = []
    try:
        agent.wait_log(r"ResourceSlices of node-a published")
        for name, writer in phases:
            cpu0 = cpu_seconds(agent.p.pid)
            set_hostile(api, writer)
            with api.lock:
                n_watch = sum(1 for m, _, _ in api.log if m == "WATCH")
            probes = {"v1": Probe(agent.v1_sock, "/v1beta1.DevicePlugin/GetDevicePluginOptions"),
                      "dra": Probe(agent.dra_sock, DRA_V1 + "NodePrepareResources")}
            if on_phase:
                on_phase(name, agent, api)
            if seconds > 0:
                time.sleep(seconds)  # the measurement window
            cpu = cpu_seconds(agent.p.pid) - cpu0
            r = {k: p.stop() for k, p in probes.items()}
            with api.lock:
                r["watches"] = sum(1 for m, _, _ in api.log if m == "WATCH") - n_watch
            r["cpu"] = cpu
            results.append((name, r))
        set_hostile(api, None)
    finally:
        agent.stop()
        api.stop()
        subprocess.run(["rm", "-rf", t])
    return results


def print_table(results, seconds):
    ms = lambda s: "%.1f" % (s * 1000)  # noqa: E731
    print("| phase (%g s) | socket | calls | median ms | p99 ms | max ms | agent CPU s | watches |" % seconds)
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results:
        for sock in ("v1", "dra"):
            s = r[sock]
            print("| %s | %s | %d | %s | %s | %s | %.2f | %d |" % (name, sock, s["n"], ms(s["median"]), ms(s["p99"]),
                                                                  ms(s["max"]), r["cpu"], r["watches"]))


def main():
    devplane = os.environ["DEVPLANE"]
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    phases = [p for p in PHASES if len(sys.argv) <= 2 or p[0] in sys.argv[2:]]
    print("# %s, %s, %d CPUs, load %s" % (devplane, platform.platform(), os.cpu_count(),
                                          " ".join("%.1f" % x for x in os.getloadavg())))
    print_table(run(devplane, seconds, phases), seconds)


if __name__ == "__main__":
    main()
