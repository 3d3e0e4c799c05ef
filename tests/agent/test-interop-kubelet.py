# SPDX-License-Identifier: Apache-2.0
"""Interop: python3-grpcio plays the kubelet against `devplane agent`.

A python Registration server on kubelet.sock that, like the kubelet, dials
the plugin and calls GetDevicePluginOptions before answering Register; then
ListAndWatch (full list with NUMA topology, health flips reported at once
and recovery reported), GetPreferredAllocation, Allocate (one response per
container request, errors as gRPC statuses), PreStartContainer; kubelet
restart (kubelet.sock re-created) -> registration again; SIGTERM removes
the agent's sockets.
"""
import os
import queue
import signal
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


class Kubelet:
    def __init__(self, pd):
        self.pd = pd
        self.registered = queue.Queue()

    def register(self, req, ctx):
        r = v1pb.parse_register_request(req)
        # as the kubelet: dial the plugin and fetch its options before replying
        with grpc.insecure_channel("unix:" + os.path.join(self.pd, r["endpoint"])) as ch:
            opts = ch.unary_unary("/v1beta1.DevicePlugin/GetDevicePluginOptions")(b"", timeout=10)
        o = v1pb.decode(opts)
        r["options_call"] = (bool(v1pb.get(o, 1, 0)), bool(v1pb.get(o, 2, 0)))
        self.registered.put(r)
        return b""

    def start(self):
        h = grpc.method_handlers_generic_handler("v1beta1.Registration", {
            "Register": grpc.unary_unary_rpc_method_handler(self.register)})
        self.srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.srv.add_generic_rpc_handlers((h,))
        self.srv.add_insecure_port("unix:" + os.path.join(self.pd, "kubelet.sock"))
        self.srv.start()

    def stop(self):
        self.srv.stop(0)
        try:
            os.unlink(os.path.join(self.pd, "kubelet.sock"))
        except FileNotFoundError:
            pass


def expect_registrations(k, n):
    got = {}
    for _ in range(n):
        r = k.registered.get(timeout=20)
        got[r["resource_name"]] = r
    return got


def main():
    t = tempfile.mkdtemp(prefix="dp-interop-kubelet.")
    pd, st = os.path.join(t, "plugins"), os.path.join(t, "state")
    os.makedirs(pd)
    cfg = os.path.join(t, "mixed.yaml")
    with open(cfg, "w") as f:
        f.write("version: v1\nflags:\n  migStrategy: mixed\n")
    k = Kubelet(pd)
    k.start()
    log = open(os.path.join(t, "agent.log"), "w")
    agent = subprocess.Popen([DEVPLANE, "agent", "--plugin-dir", pd, "--state-dir", st, "--profile", "a100-mixed",
                              "--config", cfg, "--node-name", "py"], stdout=log, stderr=log)
    ok = False
    try:
        regs = expect_registrations(k, 2)
        assert set(regs) == {"nvidia.com/gpu", "nvidia.com/mig-1g.10gb"}, regs
        for r in regs.values():
            assert r["version"] == "v1beta1" and "/" not in r["endpoint"], r
            assert os.path.exists(os.path.join(pd, r["endpoint"])), r
            assert r["pre_start_required"] and r["get_preferred_allocation_available"], r
            assert r["options_call"] == (True, True), r
        print("ok - Register x2 (gpu, mig-1g.10gb): v1beta1, endpoint in the plugin dir, options answered inside Register")

        gpu_sock = "unix:" + os.path.join(pd, regs["nvidia.com/gpu"]["endpoint"])
        ch = grpc.insecure_channel(gpu_sock)
        stream = ch.unary_stream("/v1beta1.DevicePlugin/ListAndWatch")(b"")
        lists = queue.Queue()

        def pump():
            try:
                for m in stream:
                    lists.put((time.monotonic(), v1pb.parse_list_and_watch(m)))
            except grpc.RpcError:
                lists.put(None)
        threading.Thread(target=pump, daemon=True).start()
        _, devs = lists.get(timeout=10)
        assert len(devs) == 4 and all(h == "Healthy" and numa == [1] for _, h, numa in devs), devs
        print("ok - ListAndWatch: 4 whole GPUs (4-7), Healthy, NUMA node 1")

        uuid5 = [line for line in open(os.path.join(st, "devices")).read().split("\n")]
        uuid5 = uuid5[uuid5.index("gpu-5") + 1]
        t0 = time.monotonic()
        subprocess.run([DEVPLANE, "agent", "health", "--state-dir", st, "set", "gpu-5", "unhealthy"], check=True)
        when, devs = lists.get(timeout=10)
        assert len(devs) == 4 and [d for d in devs if d[1] == "Unhealthy"] == [(uuid5, "Unhealthy", [1])], devs
        print("ok - gpu-5 unhealthy: full list sent at once (%.1f ms after the command started)" % ((when - t0) * 1000))
        subprocess.run([DEVPLANE, "agent", "health", "--state-dir", st, "set", "gpu-5", "healthy"], check=True)
        _, devs = lists.get(timeout=10)
        assert all(h == "Healthy" for _, h, _ in devs), devs
        print("ok - gpu-5 recovered: reported Healthy again")

        ids = [d[0] for d in devs]
        pref = ch.unary_unary("/v1beta1.DevicePlugin/GetPreferredAllocation")(
            v1pb.preferred_request(ids, [ids[2]], 2), timeout=10)
        chosen = v1pb.parse_preferred_response(pref)
        assert len(chosen) == 1 and len(chosen[0]) == 2 and ids[2] in chosen[0], chosen
        print("ok - GetPreferredAllocation: 2 ids including the must-include one")

        resp = v1pb.parse_allocate_response(ch.unary_unary("/v1beta1.DevicePlugin/Allocate")(
            v1pb.allocate_request([[ids[0]], [ids[1], ids[3]]]), timeout=10))
        assert len(resp) == 2, resp
        assert resp[0]["envs"]["NVIDIA_VISIBLE_DEVICES"] == ids[0], resp
        assert resp[1]["envs"]["NVIDIA_VISIBLE_DEVICES"] == ids[1] + "," + ids[3], resp
        print("ok - Allocate: one response per container request, env names exactly its GPUs")

        for bad, want in [([["GPU-nope"]], "unknown"), ([[ids[0], ids[0]]], "")]:
            try:
                ch.unary_unary("/v1beta1.DevicePlugin/Allocate")(v1pb.allocate_request(bad), timeout=10)
                raise AssertionError("Allocate %s accepted" % bad)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.UNKNOWN and want in e.details().lower(), (e.code(), e.details())
        print("ok - Allocate of an unknown or duplicated id: UNKNOWN with a reason")

        ch.unary_unary("/v1beta1.DevicePlugin/PreStartContainer")(v1pb.prestart_request([ids[0]]), timeout=30)
        try:
            ch.unary_unary("/v1beta1.DevicePlugin/NoSuchMethod")(b"", timeout=10)
            raise AssertionError("unknown method accepted")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNIMPLEMENTED, e
        print("ok - PreStartContainer OK; unknown method UNIMPLEMENTED")

        # kubelet restart: kubelet.sock goes away and comes back
        k.stop()
        t0 = time.monotonic()
        k.start()
        regs = expect_registrations(k, 2)
        print("ok - kubelet restart: both resources registered again %.1f ms after kubelet.sock came back"
              % ((time.monotonic() - t0) * 1000))
        ch.close()

        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=20) == 0
        left = [f for f in os.listdir(pd) if f.startswith("devplane-")]
        assert not left, left
        print("ok - SIGTERM: agent exits 0, its sockets removed")
        ok = True
    finally:
        k.stop()
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        log.close()
        if not ok:
            sys.stderr.write(open(os.path.join(t, "agent.log")).read()[-4000:])
        subprocess.run(["rm", "-rf", t])


if __name__ == "__main__":
    main()
