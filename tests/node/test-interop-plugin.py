# SPDX-License-Identifier: Apache-2.0
"""Interop: python3-grpcio plays a device plugin against `devplane node`.

Checks the kubelet behaviour devplane node reproduces: Register validation
(version, resource-name rule) with gRPC errors, GetDevicePluginOptions called
before Register is answered, one ListAndWatch, per-container
GetPreferredAllocation / Allocate (exactly one container request each) /
PreStartContainer, the plugin's preference honoured, envs kept, an Allocate
failure leaving the pod waiting with backoff (scenario 6, including a device
that turns unhealthy between the node's choice and Allocate), release on
manifest removal, health updates, and the grace period after the stream ends.
"""
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc

sys.path.insert(0, os.path.join(os.environ["DP_SOURCE_DIR"], "tests", "tools"))
import v1pb  # noqa: E402

DEVPLANE = os.environ["DEVPLANE"]
RES = "example.com/pydev"


class Plugin:
    def __init__(self):
        self.updates = queue.Queue()
        self.calls = {"options": 0, "law": 0, "preferred": [], "allocate": [], "prestart": []}
        self.fail_allocate = None
        self.unhealthy_on_allocate = None
        self.lock = threading.Lock()

    def options(self, req, ctx):
        self.calls["options"] += 1
        return v1pb.options(pre_start=True, preferred=True)

    def list_and_watch(self, req, ctx):
        self.calls["law"] += 1
        while ctx.is_active():
            try:
                msg = self.updates.get(timeout=0.2)
            except queue.Empty:
                continue
            if msg is None:
                return
            yield msg

    def preferred(self, req, ctx):
        reqs = v1pb.parse_preferred_request(req)
        self.calls["preferred"].append(reqs)
        avail, must, size = reqs[0]
        # prefer the highest id: the node must honour it
        return v1pb.preferred_response([sorted(avail, reverse=True)[:size]])

    def allocate(self, req, ctx):
        reqs = v1pb.parse_allocate_request(req)
        self.calls["allocate"].append(reqs)
        if self.unhealthy_on_allocate and self.unhealthy_on_allocate in reqs[0]:
            # the device turned unhealthy after the node chose it
            ctx.abort(grpc.StatusCode.UNKNOWN, "device %s is unhealthy" % self.unhealthy_on_allocate)
        if self.fail_allocate:
            ctx.abort(grpc.StatusCode.UNKNOWN, self.fail_allocate)
        return v1pb.allocate_response([v1pb.container_allocate_response({"PYDEV": ",".join(ids)}) for ids in reqs])

    def prestart(self, req, ctx):
        self.calls["prestart"].append(v1pb.strs(v1pb.decode(req), 1))
        return b""


def devices(unhealthy=()):
    return v1pb.list_and_watch_response(
        [("dev-%d" % i, "Unhealthy" if "dev-%d" % i in unhealthy else "Healthy", [i // 2]) for i in range(4)])


def serve(plugin, path):
    h = grpc.method_handlers_generic_handler("v1beta1.DevicePlugin", {
        "GetDevicePluginOptions": grpc.unary_unary_rpc_method_handler(plugin.options),
        "ListAndWatch": grpc.unary_stream_rpc_method_handler(plugin.list_and_watch),
        "GetPreferredAllocation": grpc.unary_unary_rpc_method_handler(plugin.preferred),
        "Allocate": grpc.unary_unary_rpc_method_handler(plugin.allocate),
        "PreStartContainer": grpc.unary_unary_rpc_method_handler(plugin.prestart),
    })
    from concurrent import futures
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    srv.add_generic_rpc_handlers((h,))
    srv.add_insecure_port("unix:" + path)
    srv.start()
    return srv


def register(pd, version, endpoint, resource):
    with grpc.insecure_channel("unix:" + os.path.join(pd, "kubelet.sock")) as ch:
        call = ch.unary_unary("/v1beta1.Registration/Register")
        return call(v1pb.register_request(version, endpoint, resource, v1pb.options(True, True)), timeout=10)


def pod(mf, name, *containers):
    lines = ["apiVersion: v1", "kind: Pod", "metadata: {name: %s}" % name, "spec:", "  containers:"]
    for c, n in containers:
        lines += ["  - name: %s" % c, "    resources: {limits: {%s: %d}}" % (RES, n)]
    tmp = os.path.join(mf, ".%s.tmp" % name)
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, os.path.join(mf, name + ".yaml"))


def main():
    t = tempfile.mkdtemp(prefix="dp-interop-plugin.")
    pd, mf = os.path.join(t, "plugins"), os.path.join(t, "manifests")
    os.makedirs(pd)
    os.makedirs(mf)
    log = open(os.path.join(t, "node.log"), "w")
    node = subprocess.Popen([DEVPLANE, "node", "--plugin-dir", pd, "--manifests", mf, "--node-name", "py",
                             "--backoff-initial-ms", "50", "--backoff-max-ms", "200"], stdout=log, stderr=log)
    srv = None
    ok = False
    try:
        v1pb.wait_status(DEVPLANE, pd, "node py running pid=%d" % node.pid)

        for version, resource, want in [("v1alpha1", RES, "is not supported by kubelet"),
                                        ("v1beta1", "pydev", "is invalid"),
                                        ("v1beta1", "kubernetes.io/pydev", "is invalid"),
                                        ("v1beta1", "requests.example.com/x", "is invalid")]:
            try:
                register(pd, version, "py.sock", resource)
                raise AssertionError("Register %s %s accepted" % (version, resource))
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.UNKNOWN and want in e.details(), (e.code(), e.details())
        print("ok - Register refused: bad version, bad resource names (UNKNOWN with the kubelet's text)")

        try:
            register(pd, "v1beta1", "nobody.sock", RES)
            raise AssertionError("Register with no plugin behind accepted")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNKNOWN, e
        print("ok - Register refused when the plugin socket cannot be dialled")

        plugin = Plugin()
        plugin.updates.put(devices())
        srv = serve(plugin, os.path.join(pd, "py.sock"))
        register(pd, "v1beta1", "py.sock", RES)
        assert plugin.calls["options"] == 1, "GetDevicePluginOptions must be called before Register returns"
        v1pb.wait_status(DEVPLANE, pd, "resource %s capacity=4 allocatable=4 inuse=0 plugin=connected" % RES)
        assert plugin.calls["law"] == 1
        print("ok - registered: options fetched inside Register, one ListAndWatch, capacity 4")

        pod(mf, "two", ("a", 1), ("b", 1))
        out = v1pb.wait_status(DEVPLANE, pd, "pod default/two phase=Running attempts=0 allocate-calls=2")
        assert "container default/two/a %s=dev-3" % RES in out, out   # the plugin's preference
        assert "container default/two/b %s=dev-2" % RES in out, out
        assert "env default/two/a PYDEV=dev-3" in out, out
        assert [len(r) for r in plugin.calls["allocate"]] == [1, 1], plugin.calls["allocate"]
        assert [r[0][2] for r in plugin.calls["preferred"]] == [1, 1]
        assert "dev-3" not in plugin.calls["preferred"][1][0][0], "held device offered again"
        assert plugin.calls["prestart"] == [["dev-3"], ["dev-2"]], plugin.calls["prestart"]
        print("ok - two containers: GetPreferredAllocation honoured, two Allocate calls, PreStartContainer each")

        plugin.unhealthy_on_allocate = "dev-1"
        pod(mf, "racer", ("main", 1))
        out = v1pb.wait_status(DEVPLANE, pd, "pod default/racer phase=Waiting attempts=2",
                               "pod-message default/racer Allocate failed for %s: UNKNOWN: device dev-1 is unhealthy" % RES)
        print("ok - device unhealthy between choice and Allocate: pod waits on the node with backoff")
        # the plugin reports it; the node stops offering it and the retry succeeds with dev-0
        plugin.updates.put(devices(unhealthy=("dev-1",)))
        out = v1pb.wait_status(DEVPLANE, pd, "pod default/racer phase=Running",
                               "resource %s capacity=4 allocatable=3" % RES)
        assert "container default/racer/main %s=dev-0" % RES in out, out
        print("ok - after the health update the retry got dev-0; capacity 4, allocatable 3")

        plugin.unhealthy_on_allocate = None
        plugin.fail_allocate = "out of widgets"
        pod(mf, "doomed", ("main", 1))
        v1pb.wait_status(DEVPLANE, pd, "pod default/doomed phase=Waiting attempts=3",
                         "pod-message default/doomed container main: requested number of devices unavailable")
        plugin.updates.put(devices())
        v1pb.wait_status(DEVPLANE, pd, "pod-message default/doomed Allocate failed for %s: UNKNOWN: out of widgets" % RES)
        os.unlink(os.path.join(mf, "doomed.yaml"))
        v1pb.wait_status(DEVPLANE, pd, "!pod default/doomed ", "resource %s capacity=4 allocatable=4 inuse=3" % RES)
        print("ok - refused Allocate: waiting with backoff; manifest removed: nothing held")

        os.unlink(os.path.join(mf, "two.yaml"))
        v1pb.wait_status(DEVPLANE, pd, "!pod default/two ", "resource %s capacity=4 allocatable=4 inuse=1" % RES)
        print("ok - pod removed: its two devices released")

        plugin.updates.put(None)  # end ListAndWatch
        v1pb.wait_status(DEVPLANE, pd, "resource %s capacity=4 allocatable=0 inuse=1 plugin=disconnected" % RES)
        print("ok - stream ended: devices kept (capacity 4) but not allocatable during the grace period")

        node.send_signal(signal.SIGTERM)
        assert node.wait(timeout=20) == 0
        assert not os.path.exists(os.path.join(pd, "kubelet.sock"))
        print("ok - SIGTERM: node exits 0 and removes kubelet.sock")
        ok = True
    finally:
        if srv:
            srv.stop(0)
        if node.poll() is None:
            node.kill()
            node.wait()
        log.close()
        if not ok:
            sys.stderr.write(open(os.path.join(t, "node.log")).read()[-4000:])
        subprocess.run(["rm", "-rf", t])


if __name__ == "__main__":
    main()
