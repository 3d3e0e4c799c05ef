# SPDX-License-Identifier: Apache-2.0
"""The agent's V1/V2 ledger fails closed (issue: a crash-safe node), with
python3-grpcio playing the kubelet against `devplane agent --dra`:

- the kubelet checkpoint is read past 1 MiB (another plugin's big Allocate
  answers), and only entries of the agent's own resource names hold
  devices (another plugin's device "0" is not gpu-0);
- a kubelet checkpoint that cannot be verified (bad checksum, over the
  cap) refuses DRA prepares with the reason, until it reads again;
- a refused Allocate [[gpu-3],[gpu-3]] leaves no hold and names
  container_requests[1];
- a prepared GPU is listed Unhealthy in ListAndWatch and never preferred,
  and comes back when unprepared;
- a corrupt driver checkpoint (one changed byte) is rebuilt from the CDI
  specs: the claim still holds its GPU after the restart and is answered in
  full when prepared again; temp files and orphaned specs of ours go;
  a spec of ours that cannot be read leaves every device to nobody until
  that claim is unprepared.
"""
import importlib.util
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading

import grpc

HERE = os.path.join(os.environ["DP_SOURCE_DIR"], "tests", "tools")
sys.path.insert(0, HERE)
import kubeletckpt  # noqa: E402
import v1pb  # noqa: E402

_s = importlib.util.spec_from_file_location("v2interop", os.path.join(HERE, "test-v2-interop.py"))
it = importlib.util.module_from_spec(_s)
_s.loader.exec_module(it)
pb, DRA_V1, DEVPLANE = it.pb, it.DRA_V1, it.DEVPLANE
R = "example.com/gpu"
SPEC = "k8s.gpu.example.com-gpu_%s.json"


class Log:
    """The agent's stderr, line by line, into a file and a queue: a test
    waits for the line that says an event was handled (no fixed delays)."""
    def __init__(self, path):
        self.f = open(path, "a")
        self.q = queue.Queue()

    def start(self, args):
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._pump, args=(p.stdout,), daemon=True).start()
        return p

    def _pump(self, out):
        for line in out:
            self.f.write(line)
            self.f.flush()
            self.q.put(line)

    def wait(self, text, timeout=30):
        while True:
            try:
                line = self.q.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError("no %r in the agent log" % text)
            if text in line:
                return line


def preferred(sock, avail, size):
    req = v1pb.f_len(1, b"".join(v1pb.f_len(1, a) for a in avail) + v1pb.f_varint(3, size))
    with grpc.insecure_channel("unix:" + sock) as ch:
        resp = ch.unary_unary("/v1beta1.DevicePlugin/GetPreferredAllocation")(req, timeout=10)
    return [v.decode() for n, v in v1pb.decode(dict(v1pb.decode(resp))[1]) if n == 1]


def allocate(sock, groups):
    with grpc.insecure_channel("unix:" + sock) as ch:
        req = pb["AllocateRequest"]()
        for g in groups:
            req.container_requests.add(devices_ids=g)
        return ch.unary_unary("/v1beta1.DevicePlugin/Allocate", request_serializer=it.ser,
                              response_deserializer=pb["AllocateResponse"].FromString)(req, timeout=10)


def refused(fn, *args):
    try:
        fn(*args)
    except grpc.RpcError as e:
        return e.details()
    raise AssertionError("not refused")


def main():
    t = tempfile.mkdtemp(prefix="dp-v2-fail-closed.")
    d = {k: os.path.join(t, k) for k in ("reg", "plugins", "cdi", "slices", "claims", "st", "dp")}
    os.makedirs(d["dp"])
    args = [DEVPLANE, "agent", "--dra", "--profile", "example-gpu", "--node-name", "node-a",
            "--registry-dir", d["reg"], "--plugins-dir", d["plugins"], "--cdi-dir", d["cdi"],
            "--slices-dir", d["slices"], "--claims-dir", d["claims"], "--state-dir", d["st"], "--plugin-dir", d["dp"]]
    logp = os.path.join(t, "agent.log")
    log = Log(logp)
    reg = os.path.join(d["reg"], "gpu.example.com-reg.sock")
    v1sock = os.path.join(d["dp"], "devplane-example.com_gpu.sock")
    big = bytes(1536 * 1024)  # another plugin's Allocate answer: the file passes 1 MiB
    agent = None
    ok = False
    try:
        # the kubelet's view: another plugin's device "0" with a big Allocate
        # answer, our pod p1 on gpu-1 (V1 ids are uuids: from the agent's devices file)
        agent = log.start(args)
        info = it.get_info(reg)
        devs = open(os.path.join(d["st"], "devices")).read().split("\n")
        U = {i: devs[devs.index("gpu-%d" % i) + 1] for i in range(8)}
        entries = [("pod-nic", "main", "other.example/nic", {-1: ["0"]}, big),
                   ("pod-p1", "main", R, {-1: [U[1]]}, b"")]
        good = kubeletckpt.encode(entries, {R: [U[i] for i in range(8)], "other.example/nic": ["0"]})
        assert len(good) > (1 << 20), len(good)
        kubeletckpt.write(d["dp"], good)
        log.wait("kubelet_internal_checkpoint: 1 entry of 2 for this agent's resources")
        ch = grpc.insecure_channel("unix:" + info.endpoint)
        it.write_claim(d["claims"], "c1", "uid-c1", "gpu-1")
        r = it.prepare(ch, DRA_V1, [("c1", "uid-c1")])
        err = r.claims["uid-c1"].error
        assert "held through V1 by pod pod-p1/main" in err, r
        print("ok - kubelet checkpoint of %d bytes (over 1 MiB) read: gpu-1 held by V1 pod p1, "
              "prepare refused: %s" % (len(good), err))
        it.write_claim(d["claims"], "c0", "uid-c0", "gpu-0")
        r = it.prepare(ch, DRA_V1, [("c0", "uid-c0")])
        assert not r.claims["uid-c0"].error, r
        print("ok - another plugin's device \"0\" does not hold gpu-0: prepared for claim c0")

        # bad checksum: fail closed, with the reason
        kubeletckpt.write(d["dp"], good.replace(b'"Checksum":', b'"Checksum":1'))
        log.wait("V1 holds unknown")
        it.write_claim(d["claims"], "c2", "uid-c2", "gpu-2")
        err = it.prepare(ch, DRA_V1, [("c2", "uid-c2")]).claims["uid-c2"].error
        assert "cannot be handed out through V2: the V1 holds are unknown" in err and "checksum" in err, err
        print("ok - corrupt kubelet checkpoint: prepare of gpu-2 refused: %s" % err[:160])
        kubeletckpt.write(d["dp"], good + b" " * (16 << 20))
        log.wait("larger than 16777216 bytes")
        err = it.prepare(ch, DRA_V1, [("c2", "uid-c2")]).claims["uid-c2"].error
        assert "larger than 16777216 bytes (DP_CHECKPOINT_MAX_INPUT)" in err, err
        print("ok - kubelet checkpoint over the 16 MiB cap: prepare still refused")
        kubeletckpt.write(d["dp"], good)
        log.wait("V1 holds known again")
        r = it.prepare(ch, DRA_V1, [("c2", "uid-c2")])
        assert not r.claims["uid-c2"].error, r
        print("ok - checkpoint readable again: gpu-2 prepared")

        # a refused Allocate holds nothing and names the right request
        e = refused(allocate, v1sock, [[U[3]], [U[3]]])
        assert "container_requests[1]: device %s is also in container_requests[0]" % U[3] in e, e
        it.write_claim(d["claims"], "c3", "uid-c3", "gpu-3")
        r = it.prepare(ch, DRA_V1, [("c3", "uid-c3")])
        assert not r.claims["uid-c3"].error, r
        print("ok - Allocate [[gpu-3],[gpu-3]] refused (%s), no phantom hold: gpu-3 prepared" % e)

        # prepared GPUs leave V1
        lw = grpc.insecure_channel("unix:" + v1sock)
        stream = lw.unary_stream("/v1beta1.DevicePlugin/ListAndWatch", request_serializer=it.ser,
                                 response_deserializer=pb["ListAndWatchResponse"].FromString)(pb["Empty"]())
        lists = queue.Queue()
        def pump():
            try:
                for m in stream:
                    lists.put({x.ID: x.health for x in m.devices})
            except grpc.RpcError:
                pass
        threading.Thread(target=pump, daemon=True).start()
        first = lists.get(timeout=10)
        held = {U[0], U[2], U[3]}
        assert all(first[u] == ("Unhealthy" if u in held else "Healthy") for u in U.values()), first
        got = preferred(v1sock, [U[0], U[4], U[2]], 1)
        assert got == [U[4]], got
        print("ok - ListAndWatch: gpu-0, gpu-2, gpu-3 (prepared) Unhealthy, the rest Healthy; "
              "GetPreferredAllocation never offers them")
        it.unprepare(ch, [("c0", "uid-c0")])
        m = lists.get(timeout=10)
        assert m[U[0]] == "Healthy" and m[U[2]] == "Unhealthy", m
        print("ok - claim c0 unprepared: gpu-0 listed Healthy again")
        stream.cancel()
        lw.close()
        ch.close()

        # a corrupt driver checkpoint is rebuilt, never forgotten
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=20) == 0
        ckp = os.path.join(d["plugins"], "gpu.example.com", "checkpoint.json")
        raw = bytearray(open(ckp, "rb").read())
        i = raw.index(b"uid-c2")
        raw[i + 4] = ord("x")  # one changed byte
        open(ckp, "wb").write(raw)
        spec3 = open(os.path.join(d["cdi"], SPEC % "uid-c3")).read()
        tmps = [os.path.join(d["cdi"], "." + SPEC % "uid-c9" + ".Ab12Cd"),
                os.path.join(d["plugins"], "gpu.example.com", ".checkpoint.json.Zz09ab")]
        for p in tmps:
            open(p, "w").write("{")
        foreign = os.path.join(d["cdi"], ".nvidia.com-gpu_x.json.Ab12Cd")
        open(foreign, "w").write("{")
        os.unlink(os.path.join(d["claims"], "default", "c3.yaml"))  # c3: only its spec is left
        agent = log.start(args)
        info = it.get_info(reg)
        e = refused(allocate, v1sock, [[U[2]]])
        assert "held through V2 by claim default/c2 (uid-c2)" in e, e
        e3 = refused(allocate, v1sock, [[U[3]]])
        assert "held through V2 by claim / (uid-c3)" in e3, e3
        assert not any(os.path.exists(p) for p in tmps) and os.path.exists(foreign), os.listdir(d["cdi"])
        print("ok - one byte changed in the driver checkpoint: rebuilt, never forgotten: gpu-2 held by c2 "
              "(completed from its claim file), gpu-3 by c3 (from its CDI spec alone: %s); our temp files "
              "removed, another's kept" % e3)
        ch = grpc.insecure_channel("unix:" + info.endpoint)
        it.write_claim(d["claims"], "c3", "uid-c3", "gpu-3")
        r = it.prepare(ch, DRA_V1, [("c3", "uid-c3")])
        dev = r.claims["uid-c3"].devices
        assert not r.claims["uid-c3"].error and list(dev[0].request_names) == ["gpu"], r
        e = refused(allocate, v1sock, [[U[3]]])
        assert "held through V2 by claim default/c3 (uid-c3)" in e, e
        print("ok - the kubelet prepares c3 again: answered in full (request gpu), held under its name")
        it.unprepare(ch, [("c2", "uid-c2")])
        allocate(v1sock, [[U[2]]])
        print("ok - c2 unprepared: gpu-2 allocatable through V1")
        ch.close()

        # orphans go; an unreadable spec of ours leaves everything to nobody
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=20) == 0
        orphan = os.path.join(d["cdi"], SPEC % "uid-orph")
        open(orphan, "w").write(spec3.replace("uid-c3", "uid-orph"))
        agent = log.start(args)
        info = it.get_info(reg)
        assert not os.path.exists(orphan) and os.path.exists(os.path.join(d["cdi"], SPEC % "uid-c3"))
        print("ok - an orphaned spec of ours (no checkpoint entry) removed at start; c3's kept")
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=20) == 0
        raw = bytearray(open(ckp, "rb").read())
        raw[raw.index(b"uid-c3") + 4] = ord("y")
        open(ckp, "wb").write(raw)
        bad = os.path.join(d["cdi"], SPEC % "uid-bad")
        open(bad, "w").write('{"kind":"k8s.gpu.example.com/gpu","devices":[{"na')
        agent = log.start(args)
        info = it.get_info(reg)
        e = refused(allocate, v1sock, [[U[5]]])
        assert "the devices of claim uid-bad are unknown" in e, e
        ch = grpc.insecure_channel("unix:" + info.endpoint)
        it.write_claim(d["claims"], "c6", "uid-c6", "gpu-6")
        err = it.prepare(ch, DRA_V1, [("c6", "uid-c6")]).claims["uid-c6"].error
        assert "the devices of claim uid-bad are unknown" in err, err
        print("ok - corrupt checkpoint and an unreadable spec of ours: nothing handed out (%s)" % e[:120])
        u = it.unprepare(ch, [("bad", "uid-bad")])
        assert not u.claims["uid-bad"].error and not os.path.exists(bad), u
        allocate(v1sock, [[U[5]]])
        assert not it.prepare(ch, DRA_V1, [("c6", "uid-c6")]).claims["uid-c6"].error
        e = refused(allocate, v1sock, [[U[3]]])
        assert "uid-c3" in e, e
        print("ok - the unknown claim unprepared: V1 and V2 hand out again; c3 still holds gpu-3")
        ch.close()
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=20) == 0
        ok = True
    finally:
        if agent and agent.poll() is None:
            agent.kill()
            agent.wait()
        if not ok:
            sys.stderr.write(open(logp).read()[-6000:])
        subprocess.run(["rm", "-rf", t])


if __name__ == "__main__":
    main()
