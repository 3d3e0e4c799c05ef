# SPDX-License-Identifier: Apache-2.0
"""Hostile connections against a real `devplane agent` (issue 11, item 9):
on one device-plugin socket, 20 connections each half-send a 4 MiB Allocate
request and 100 more connect and send nothing. The agent keeps at most
DP_GRPC_MAX_SERVER_CONNECTIONS (64) of them open (each new one past the cap
replaces the one idle longest), holds at most DP_GRPC_MAX_SERVER_BUFFERED
(32 MiB) of their request bytes, and the agent's other socket keeps answering
all along: the worst latency seen there is printed (the issue's goal is
100 ms; the assertion is a generous bound for a loaded, sanitized build).
While the 64 are held, a new client (the kubelet) still gets an answer on the
attacked socket (issue 21, F11: it used to be locked out until the idle
timeout closed them, 30 s)."""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.environ["DP_SOURCE_DIR"], "tests", "tools"))
import v1pb  # noqa: E402

DEVPLANE = os.environ["DEVPLANE"]
OPTIONS = "/v1beta1.DevicePlugin/GetDevicePluginOptions"
# Calls GetDevicePluginOptions on the socket argv[1] until a line arrives on
# stdin; prints "CALLS WORST_SECONDS".
PROBE = """
import select, sys, time, grpc
ch = grpc.insecure_channel("unix:" + sys.argv[1])
call = ch.unary_unary("/v1beta1.DevicePlugin/GetDevicePluginOptions")
call(b"", timeout=30)
print("ready", flush=True)
n, worst = 0, 0.0
while not select.select([sys.stdin], [], [], 0)[0]:
    t0 = time.monotonic()
    call(b"", timeout=30)
    worst = max(worst, time.monotonic() - t0)
    n += 1
print(n, worst)
"""


def frame(ftype, flags, sid, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def hpack_literal(name, value):
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def read_frame(s):
    hdr = b""
    while len(hdr) < 9:
        b = s.recv(9 - len(hdr))
        if not b:
            return None
        hdr += b
    n = struct.unpack(">I", b"\x00" + hdr[:3])[0]
    body = b""
    while len(body) < n:
        b = s.recv(n - len(body))
        if not b:
            return None
        body += b
    return hdr[3], hdr[4], body


def half_sent_request(path):
    """Connect, settle SETTINGS, send the headers of an Allocate and all but
    the last 1,000 bytes of a 4 MiB message. Returns the socket (or None if
    the agent closed it: the connection cap)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
    while True:  # the server's SETTINGS, then ours acknowledge it
        f = read_frame(s)
        if f is None:
            s.close()
            return None
        if f[0] == 4 and not f[1] & 1:
            break
    s.sendall(frame(4, 1, 0, b""))
    hdrs = b"".join(hpack_literal(n, v) for n, v in [
        (b":method", b"POST"), (b":scheme", b"http"), (b":path", b"/v1beta1.DevicePlugin/Allocate"),
        (b":authority", b"localhost"), (b"content-type", b"application/grpc"), (b"te", b"trailers")])
    s.sendall(frame(1, 4, 1, hdrs))
    size = 4 * 1024 * 1024 - 1
    data = b"\x00" + struct.pack(">I", size) + b"\x01" * (size - 1000)
    try:
        for off in range(0, len(data), 16384):
            s.sendall(frame(0, 0, 1, data[off:off + 16384]))
    except (BrokenPipeError, ConnectionResetError):
        pass
    return s


def rss_kib(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Kubelet:
    def __init__(self, pd):
        self.pd, self.regs, self.cond = pd, {}, threading.Condition()

    def register(self, req, ctx):
        r = v1pb.parse_register_request(req)
        with self.cond:
            self.regs[r["resource_name"]] = r
            self.cond.notify_all()
        return b""

    def start(self):
        h = grpc.method_handlers_generic_handler("v1beta1.Registration", {
            "Register": grpc.unary_unary_rpc_method_handler(self.register)})
        self.srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.srv.add_generic_rpc_handlers((h,))
        self.srv.add_insecure_port("unix:" + os.path.join(self.pd, "kubelet.sock"))
        self.srv.start()


def main():
    t = tempfile.mkdtemp(prefix="dp-hostile-conns.")
    pd, st = os.path.join(t, "plugins"), os.path.join(t, "state")
    os.makedirs(pd)
    cfg = os.path.join(t, "mixed.yaml")
    with open(cfg, "w") as f:
        f.write("version: v1\nflags:\n  migStrategy: mixed\n")
    k = Kubelet(pd)
    k.start()
    log = open(os.path.join(t, "agent.log"), "w")
    # ASan keeps freed memory in a quarantine (256 MiB by default): refused
    # connections' buffers would count as growth. A small quarantine makes RSS
    # follow live memory, which is what the cap bounds.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(x for x in (env.get("ASAN_OPTIONS"), "quarantine_size_mb=4") if x)
    agent = subprocess.Popen([DEVPLANE, "agent", "--plugin-dir", pd, "--state-dir", st, "--profile", "a100-mixed",
                              "--config", cfg, "--node-name", "py"], stdout=log, stderr=log, env=env)
    attackers, ok = [], False
    try:
        with k.cond:
            assert k.cond.wait_for(lambda: len(k.regs) == 2, timeout=60), k.regs
        a_path = os.path.join(pd, k.regs["nvidia.com/gpu"]["endpoint"])
        b_path = os.path.join(pd, k.regs["nvidia.com/mig-1g.10gb"]["endpoint"])
        b = grpc.insecure_channel("unix:" + b_path)
        b.unary_unary(OPTIONS)(b"", timeout=30)
        rss0 = rss_kib(agent.pid)

        # the probe runs in its own process: the attackers' Python threads
        # must not delay it (one interpreter lock)
        probe = subprocess.Popen([sys.executable, "-c", PROBE, b_path], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        assert probe.stdout.readline().strip() == "ready"

        for _ in range(20):
            s = half_sent_request(a_path)
            if s:
                attackers.append(s)
        refused = 0
        for _ in range(100):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(a_path)
            attackers.append(s)
        # past the cap each new connection replaces the one idle longest:
        # count EOFs (the half-sent ones are the oldest)
        for s in attackers:
            s.settimeout(0.5)
            try:
                while True:
                    if not s.recv(65536):
                        refused += 1
                        break
            except (socket.timeout, ConnectionResetError):
                pass
        rss1 = rss_kib(agent.pid)
        # the kubelet connects while the 64 are held
        t0 = time.monotonic()
        with grpc.insecure_channel("unix:" + a_path) as kubelet:
            kubelet.unary_unary(OPTIONS)(b"", timeout=10)
        print("ok - 64 connections held: a new client was answered on the attacked socket in %.0f ms"
              % ((time.monotonic() - t0) * 1000))
        out, _ = probe.communicate("stop\n", timeout=60)
        calls, worst = int(out.split()[0]), float(out.split()[1])
        assert calls > 0
        assert refused >= 120 - 64 - 1, refused  # 64 kept open (one may still be in the backlog)
        grown = (rss1 - rss0) / 1024.0
        print("ok - 20 half-sent 4 MiB requests and 100 idle connections on one socket: %d closed at the cap, "
              "agent RSS +%.1f MiB" % (refused, grown))
        assert grown < 128, grown  # 32 MiB of request bytes at most, ASan and the small quarantine on top
        print("ok - the other socket answered %d calls, worst latency %.1f ms" % (calls, worst * 1000))
        assert worst < 5.0, worst

        for s in attackers:
            s.close()
        attackers = []
        a = grpc.insecure_channel("unix:" + a_path)
        deadline = time.monotonic() + 60
        while True:  # the agent notices the closed sockets on its next loop round
            try:
                a.unary_unary(OPTIONS)(b"", timeout=10)
                break
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise
        print("ok - attackers gone: the attacked socket answers again")
        ok = True
    finally:
        for s in attackers:
            s.close()
        agent.terminate()
        agent.wait(timeout=30)
        k.srv.stop(0)
        log.close()
        if not ok:
            sys.stdout.write(open(os.path.join(t, "agent.log")).read()[-4000:])
        subprocess.run(["rm", "-rf", t])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
