# SPDX-License-Identifier: Apache-2.0
"""Interop: python3-grpcio plays the kubelet against `devplane agent --dra`.

Messages are google.protobuf classes built at run time from descriptors
(tests/grpc/pbdefs.py, plus the unprepare and health messages here), so our
encoding is checked against Google's runtime. Covers: plugin-watcher
registration (GetInfo within 1 s: type, name, absolute endpoint, versions
with v1 first; NotifyRegistrationStatus true/false), the registration
socket re-created after removal, NodePrepareResources over v1 and v1beta1
(CDI ids, the CDI spec file with GPU_DEVICE_0, idempotence from the
checkpoint, per-claim errors), the v1alpha1 health stream (complete list,
unhealthy and recovery), the ResourceSlice taint and generation, the V1/V2
ledger in both directions, NodeUnprepareResources (files removed, every
claim answered), and a restart that answers from the checkpoint.
"""
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading

import grpc

sys.path.insert(0, os.path.join(os.environ["DP_SOURCE_DIR"], "tests", "grpc"))
from google.protobuf import descriptor_pool, message_factory  # noqa: E402
from pbdefs import STRING, INT64, MSG, OPT, REP, _file, pb  # noqa: E402

DEVPLANE = os.environ["DEVPLANE"]
_F = __import__("google.protobuf.descriptor_pb2", fromlist=["x"]).FieldDescriptorProto
ENUM = _F.TYPE_ENUM


def _extra():
    pool = descriptor_pool.DescriptorPool()
    dra = {
        "Claim": [("namespace", 1, STRING, OPT, None), ("uid", 2, STRING, OPT, None), ("name", 3, STRING, OPT, None)],
        "NodeUnprepareResourcesRequest": [("claims", 1, MSG, REP, "Claim")],
        "NodeUnprepareResourceResponse": [("error", 1, STRING, OPT, None)],
        "NodeUnprepareResourcesResponse": [("claims", 1, MSG, REP, "NodeUnprepareResourcesResponse.ClaimsEntry")],
    }
    f1 = _file("devplane_v2_unprep.proto", "k8s.io.kubelet.pkg.apis.dra.v1", dra,
               {"NodeUnprepareResourcesResponse": [("ClaimsEntry", "NodeUnprepareResourceResponse")]})
    health = {
        "NodeWatchResourcesRequest": [],
        "DeviceIdentifier": [("pool_name", 1, STRING, OPT, None), ("device_name", 2, STRING, OPT, None)],
        "DeviceHealth": [("device", 1, MSG, OPT, "DeviceIdentifier"), ("health", 2, INT64, OPT, None),
                         ("last_updated_time", 3, INT64, OPT, None),
                         ("health_check_timeout_seconds", 4, INT64, OPT, None), ("message", 5, STRING, OPT, None)],
        "NodeWatchResourcesResponse": [("devices", 1, MSG, REP, "DeviceHealth")],
    }
    # HealthStatus is an enum on the wire: a varint, read here as int64.
    f2 = _file("devplane_v2_health.proto", "v1alpha1", health, {})
    factory = message_factory.MessageFactory(pool)
    out = {}
    for fdp, msgs, pkg in ((f1, dra, "k8s.io.kubelet.pkg.apis.dra.v1"), (f2, health, "v1alpha1")):
        pool.Add(fdp)
        for n in msgs:
            out[n] = factory.GetPrototype(pool.FindMessageTypeByName(pkg + "." + n))
    return out


X = _extra()
ser = lambda m: m.SerializeToString()  # noqa: E731
DRA_V1 = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
DRA_V1BETA1 = "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/"

CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: %(name)s, namespace: default, uid: %(uid)s}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: node-a, device: %(dev)s}
"""


def write_claim(cd, name, uid, dev):
    os.makedirs(os.path.join(cd, "default"), exist_ok=True)
    tmp = os.path.join(cd, "default", "." + name)
    with open(tmp, "w") as f:
        f.write(CLAIM % {"name": name, "uid": uid, "dev": dev})
    os.rename(tmp, os.path.join(cd, "default", name + ".yaml"))


def prepare(ch, prefix, claims):
    call = ch.unary_unary(prefix + "NodePrepareResources", request_serializer=ser,
                          response_deserializer=pb["v1.NodePrepareResourcesResponse"].FromString)
    req = pb["v1.NodePrepareResourcesRequest"]()
    for name, uid in claims:
        req.claims.add(namespace="default", uid=uid, name=name)
    return call(req, timeout=45)


def unprepare(ch, claims):
    call = ch.unary_unary(DRA_V1 + "NodeUnprepareResources", request_serializer=ser,
                          response_deserializer=X["NodeUnprepareResourcesResponse"].FromString)
    req = X["NodeUnprepareResourcesRequest"]()
    for name, uid in claims:
        req.claims.add(namespace="default", uid=uid, name=name)
    return call(req, timeout=45)


def get_info(sock):
    """Wait (gRPC wait_for_ready) until the socket answers, then ask again
    under the kubelet's 1 s deadline."""
    with grpc.insecure_channel("unix:" + sock, options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
        call = ch.unary_unary("/pluginregistration.Registration/GetInfo", request_serializer=ser,
                              response_deserializer=pb["pluginregistration.PluginInfo"].FromString)
        call(pb["pluginregistration.InfoRequest"](), timeout=30, wait_for_ready=True)
        return call(pb["pluginregistration.InfoRequest"](), timeout=1)


def v1_allocate(sock, ids):
    with grpc.insecure_channel("unix:" + sock) as ch:
        req = pb["AllocateRequest"]()
        req.container_requests.add(devices_ids=ids)
        return ch.unary_unary("/v1beta1.DevicePlugin/Allocate", request_serializer=ser,
                              response_deserializer=pb["AllocateResponse"].FromString)(req, timeout=10)


def slices_text(sd):
    return open(os.path.join(sd, "node-a-gpu.example.com.yaml")).read()


def main():
    t = tempfile.mkdtemp(prefix="dp-v2-interop.")
    d = {k: os.path.join(t, k) for k in ("reg", "plugins", "cdi", "slices", "claims", "st", "dp")}
    args = [DEVPLANE, "agent", "--dra", "--profile", "example-gpu", "--node-name", "node-a",
            "--registry-dir", d["reg"], "--plugins-dir", d["plugins"], "--cdi-dir", d["cdi"],
            "--slices-dir", d["slices"], "--claims-dir", d["claims"], "--state-dir", d["st"], "--plugin-dir", d["dp"]]
    log = open(os.path.join(t, "agent.log"), "a")
    agent = subprocess.Popen(args, stdout=log, stderr=log)
    reg = os.path.join(d["reg"], "gpu.example.com-reg.sock")
    ok = False
    try:
        info = get_info(reg)
        assert (info.type, info.name) == ("DRAPlugin", "gpu.example.com"), info
        assert info.endpoint == os.path.join(d["plugins"], "gpu.example.com", "dra.sock"), info.endpoint
        assert list(info.supported_versions) == ["v1.DRAPlugin", "v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth"]
        nch = grpc.insecure_channel("unix:" + reg, options=[("grpc.use_local_subchannel_pool", 1)])
        notify = nch.unary_unary(
            "/pluginregistration.Registration/NotifyRegistrationStatus", request_serializer=ser,
            response_deserializer=pb["pluginregistration.RegistrationStatusResponse"].FromString)
        notify(pb["pluginregistration.RegistrationStatus"](plugin_registered=True), timeout=5)
        try:
            notify(pb["pluginregistration.RegistrationStatus"](error="no handler"), timeout=5)
            raise AssertionError("refused registration answered OK")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNKNOWN and "no handler" in e.details(), e
        nch.close()
        print("ok - GetInfo: DRAPlugin gpu.example.com, absolute endpoint, v1 first, health advertised; Notify true/false")

        os.unlink(reg)
        info = get_info(reg)  # waits until the agent serves it again
        assert info.name == "gpu.example.com"
        print("ok - registration socket removed: re-created and answering")

        ch = grpc.insecure_channel("unix:" + info.endpoint)
        stream = ch.unary_stream("/v1alpha1.DRAResourceHealth/NodeWatchResources",
                                 request_serializer=ser, response_deserializer=X["NodeWatchResourcesResponse"].FromString)(
            X["NodeWatchResourcesRequest"]())
        health = queue.Queue()

        def pump():
            try:
                for m in stream:
                    health.put({h.device.device_name: (h.health, h.message) for h in m.devices
                                if h.device.pool_name == "node-a"})
            except grpc.RpcError:
                health.put(None)
        threading.Thread(target=pump, daemon=True).start()
        first = health.get(timeout=10)
        assert len(first) == 8 and all(h == 1 for h, _ in first.values()), first
        print("ok - NodeWatchResources (v1alpha1): complete list, 8 devices HEALTHY")

        write_claim(d["claims"], "c0", "uid-c0", "gpu-0")
        r = prepare(ch, DRA_V1, [("c0", "uid-c0"), ("ghost", "uid-ghost")])
        assert sorted(r.claims.keys()) == ["uid-c0", "uid-ghost"], r
        dev = r.claims["uid-c0"].devices
        assert len(dev) == 1 and (dev[0].pool_name, dev[0].device_name) == ("node-a", "gpu-0"), r
        assert list(dev[0].request_names) == ["gpu"] and not r.claims["uid-c0"].error, r
        cdi_id = list(dev[0].cdi_device_ids)
        assert cdi_id == ["k8s.gpu.example.com/gpu=uid-c0-gpu-0"], cdi_id
        assert "not found" in r.claims["uid-ghost"].error and not r.claims["uid-ghost"].devices, r
        spec = [f for f in os.listdir(d["cdi"]) if "uid-c0" in f]
        assert len(spec) == 1 and "GPU_DEVICE_0=gpu-0" in open(os.path.join(d["cdi"], spec[0])).read(), spec
        print("ok - NodePrepareResources v1: CDI id %s, spec %s with GPU_DEVICE_0=gpu-0; missing claim: "
              "per-claim error" % (cdi_id[0], spec[0]))

        os.unlink(os.path.join(d["claims"], "default", "c0.yaml"))
        r2 = prepare(ch, DRA_V1BETA1, [("c0", "uid-c0")])
        assert list(r2.claims["uid-c0"].devices[0].cdi_device_ids) == cdi_id and not r2.claims["uid-c0"].error, r2
        print("ok - NodePrepareResources v1beta1, claim file gone: same answer from the checkpoint")

        v1sock = os.path.join(d["dp"], "devplane-example.com_gpu.sock")
        devs = open(os.path.join(d["st"], "devices")).read().split("\n")
        uuid0, uuid1 = devs[devs.index("gpu-0") + 1], devs[devs.index("gpu-1") + 1]
        try:
            v1_allocate(v1sock, [uuid0])
            raise AssertionError("V1 Allocate of a device prepared through V2 succeeded")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNKNOWN and "held through V2" in e.details(), e.details()
            print("ok - ledger: V1 Allocate of gpu-0 refused: %s" % e.details())
        v1_allocate(v1sock, [uuid1])
        write_claim(d["claims"], "c1", "uid-c1", "gpu-1")
        r = prepare(ch, DRA_V1, [("c1", "uid-c1")])
        err = r.claims["uid-c1"].error
        assert "held through V1" in err and not r.claims["uid-c1"].devices, r
        assert not [f for f in os.listdir(d["cdi"]) if "uid-c1" in f]
        print("ok - ledger: V2 prepare of gpu-1 (given out by V1 Allocate) refused: %s" % err)

        subprocess.run([DEVPLANE, "agent", "health", "--state-dir", d["st"], "set", "gpu-3", "unhealthy"], check=True)
        h = health.get(timeout=10)
        assert h["gpu-3"][0] == 2 and h["gpu-3"][1] and all(v[0] == 1 for k, v in h.items() if k != "gpu-3"), h
        s = slices_text(d["slices"])
        assert "generation: 2" in s and "key: gpu.example.com/unhealthy" in s and s.count("effect: NoSchedule") == 1, s
        print("ok - gpu-3 unhealthy: health stream UNHEALTHY (%s), slice generation 2 with its taint" % h["gpu-3"][1])
        subprocess.run([DEVPLANE, "agent", "health", "--state-dir", d["st"], "set", "gpu-3", "healthy"], check=True)
        h = health.get(timeout=10)
        assert all(v[0] == 1 for v in h.values()), h
        s = slices_text(d["slices"])
        assert "generation: 3" in s and "taints" not in s, s
        print("ok - gpu-3 recovered: HEALTHY, slice generation 3 without taints")

        u = unprepare(ch, [("c0", "uid-c0"), ("c1", "uid-c1"), ("never", "uid-never")])
        assert sorted(u.claims.keys()) == ["uid-c0", "uid-c1", "uid-never"], u
        assert all(not v.error for v in u.claims.values()), u
        assert not [f for f in os.listdir(d["cdi"]) if "uid-c0" in f], os.listdir(d["cdi"])
        print("ok - NodeUnprepareResources: every claim answered, CDI spec removed")

        write_claim(d["claims"], "c2", "uid-c2", "gpu-0")
        r = prepare(ch, DRA_V1, [("c2", "uid-c2")])
        assert not r.claims["uid-c2"].error, r
        print("ok - gpu-0 released by unprepare: prepared again for another claim")

        stream.cancel()
        ch.close()
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=20) == 0
        assert not os.path.exists(reg) and not os.path.exists(info.endpoint)
        agent = subprocess.Popen(args, stdout=log, stderr=log)
        info = get_info(reg)
        with grpc.insecure_channel("unix:" + info.endpoint) as ch2:
            os.unlink(os.path.join(d["claims"], "default", "c2.yaml"))
            r = prepare(ch2, DRA_V1, [("c2", "uid-c2")])
            assert r.claims["uid-c2"].devices[0].device_name == "gpu-0" and not r.claims["uid-c2"].error, r
        assert "generation: 4" in slices_text(d["slices"]), slices_text(d["slices"])[:400]
        print("ok - restart: sockets removed on SIGTERM, prepared claim answered from the checkpoint, "
              "slices continue at generation 4")
        agent.send_signal(signal.SIGTERM)
        assert agent.wait(timeout=20) == 0
        ok = True
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        if not ok:
            log.flush()
            sys.stderr.write(open(os.path.join(t, "agent.log")).read()[-4000:])
        subprocess.run(["rm", "-rf", t])


if __name__ == "__main__":
    main()
