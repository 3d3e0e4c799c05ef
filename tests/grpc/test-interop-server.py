# SPDX-License-Identifier: Apache-2.0
"""Python grpcio client -> devplane's gRPC server (grpc-peer-server)."""
import os
import signal
import sys

import grpc

from interop import Proc, Runner, peer, tmpdir
from pbdefs import pb

DP = "/v1beta1.DevicePlugin/"


def raw(ch, path):
    return ch.unary_unary(path)


def test_options(ch, srv):
    call = ch.unary_unary(DP + "GetDevicePluginOptions", request_serializer=lambda m: m.SerializeToString(),
                          response_deserializer=pb["DevicePluginOptions"].FromString)
    o = call(pb["Empty"](), timeout=10)
    assert o.pre_start_required and o.get_preferred_allocation_available, o


def test_allocate(ch, srv):
    call = ch.unary_unary(DP + "Allocate", request_serializer=lambda m: m.SerializeToString(),
                          response_deserializer=pb["AllocateResponse"].FromString)
    req = pb["AllocateRequest"]()
    req.container_requests.add().devices_ids.extend(["gpu-0", "gpu-3"])
    resp = call(req)  # no deadline, like the kubelet
    assert len(resp.container_responses) == 1
    c = resp.container_responses[0]
    assert dict(c.envs) == {"DEVICES": "gpu-0,gpu-3"}, c
    assert [d.name for d in c.cdi_devices] == ["vendor.com/gpu=gpu-0", "vendor.com/gpu=gpu-3"]
    assert c.mounts[0].read_only and c.mounts[0].container_path == "/dev/shm"


def test_list_and_watch(ch, srv):
    call = ch.unary_stream(DP + "ListAndWatch", request_serializer=lambda m: m.SerializeToString(),
                           response_deserializer=pb["ListAndWatchResponse"].FromString)
    it = call(pb["Empty"]())
    sizes = []
    for resp in it:
        sizes.append(len(resp.devices))
        if len(sizes) == 3:
            break
    assert sizes == [1, 2, 3], sizes
    assert resp.devices[1].health == "Unhealthy" and resp.devices[2].ID == "gpu-2"
    it.cancel()
    # the server's cancel handler reports the client going away
    line = srv.expect("CANCEL " + DP + "ListAndWatch")
    assert line.endswith(" 1"), line


def test_stream_to_end(ch, srv):
    msgs = list(ch.unary_stream("/test.Test/Count")(b"50", timeout=10))
    assert msgs == [b"msg-%d" % i for i in range(50)], msgs[:3]


def test_empty_stream(ch, srv):
    assert list(ch.unary_stream("/test.Test/Count")(b"0", timeout=10)) == []


def test_error_status(ch, srv):
    try:
        raw(ch, "/test.Test/Fail")(b"", timeout=10)
        raise AssertionError("no error")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION, e.code()
        assert e.details() == "gpu-1 is 100% \u00fcnhealthy\nsee dmesg", repr(e.details())


def test_unknown_method(ch, srv):
    for path in (DP + "Nope", "/no.Such/Service"):
        try:
            raw(ch, path)(b"", timeout=10)
            raise AssertionError("no error")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNIMPLEMENTED, e.code()


def test_deadline(ch, srv):
    try:
        raw(ch, "/test.Test/Slow")(b"", timeout=1.0)  # long enough to reach a loaded server
        raise AssertionError("no error")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.DEADLINE_EXCEEDED, e.code()
    line = srv.expect("CANCEL /test.Test/Slow")
    assert line.endswith(" 4") or line.endswith(" 1"), line


def test_oversize_reply(ch, srv):
    try:
        raw(ch, "/test.Test/Big")(b"", timeout=20)
        raise AssertionError("no error")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e.code()


def test_oversize_request(ch, srv):
    try:
        raw(ch, "/test.Test/Echo")(b"x" * (4 * 1024 * 1024 + 1), timeout=20)
        raise AssertionError("no error")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e.code()


def test_big_echo_and_concurrency(ch, srv):
    big = bytes(range(256)) * (3 * 4096)  # 3 MiB: flow control both ways
    assert raw(ch, "/test.Test/Echo")(big, timeout=20) == big
    futs = [raw(ch, "/test.Test/Echo").future(b"req-%d" % i, timeout=20) for i in range(40)]
    slow = raw(ch, "/test.Test/Slow").future(b"", timeout=30)  # in flight all along
    for i, f in enumerate(futs):
        assert f.result() == b"req-%d" % i
    # A call cancelled before its HEADERS left the client never reaches the
    # server (a loaded machine delays the write): cancel it once it is held.
    srv.expect("HELD /test.Test/Slow")
    slow.cancel()
    srv.expect("CANCEL /test.Test/Slow")


def ser(m):
    return m.SerializeToString()


def test_plugin_registration(ch, srv):
    info = ch.unary_unary("/pluginregistration.Registration/GetInfo", request_serializer=ser,
                          response_deserializer=pb["pluginregistration.PluginInfo"].FromString)(
        pb["pluginregistration.InfoRequest"](), timeout=1)  # the kubelet's 1 s deadline
    assert (info.type, info.name) == ("DRAPlugin", "gpu.example.com"), info
    assert list(info.supported_versions) == ["v1.DRAPlugin", "v1beta1.DRAPlugin"]
    notify = ch.unary_unary("/pluginregistration.Registration/NotifyRegistrationStatus", request_serializer=ser,
                            response_deserializer=pb["pluginregistration.RegistrationStatusResponse"].FromString)
    notify(pb["pluginregistration.RegistrationStatus"](plugin_registered=True), timeout=5)
    try:
        notify(pb["pluginregistration.RegistrationStatus"](error="no handler for DRAPlugin"), timeout=5)
        raise AssertionError("no error")
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.UNKNOWN and "no handler" in e.details(), e


def test_dra_prepare(ch, srv):
    call = ch.unary_unary("/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources", request_serializer=ser,
                          response_deserializer=pb["v1.NodePrepareResourcesResponse"].FromString)
    req = pb["v1.NodePrepareResourcesRequest"]()
    req.claims.add(namespace="default", uid="uid-1", name="gpu-0")
    req.claims.add(namespace="shared", uid="uid-2", name="gpu-1")
    req.claims.add(namespace="default", uid="uid-3", name="bad")
    resp = call(req, timeout=45)
    assert sorted(resp.claims.keys()) == ["uid-1", "uid-2", "uid-3"], resp
    d1 = resp.claims["uid-1"].devices[0]
    assert (d1.pool_name, d1.device_name, list(d1.cdi_device_ids)) == ("node-a", "gpu-0", ["gpu.example.com/gpu=gpu-0"])
    assert not d1.HasField("share_id")
    d2 = resp.claims["uid-2"].devices[0]
    assert d2.HasField("share_id") and d2.share_id == ""  # presence survives
    assert resp.claims["uid-3"].error == "no such device" and not resp.claims["uid-3"].devices


def test_graceful_shutdown(sock, srv):
    ch = grpc.insecure_channel("unix:" + sock)
    it = ch.unary_stream(DP + "ListAndWatch")(b"")
    first = next(it)
    assert pb["ListAndWatchResponse"].FromString(first).devices[0].ID == "gpu-0"
    srv.p.send_signal(signal.SIGTERM)
    rest = list(it)  # the held stream ends with OK on shutdown
    assert it.code() == grpc.StatusCode.OK, it.code()
    srv.expect("BYE")
    assert srv.p.wait(timeout=20) == 0
    assert not os.path.exists(sock)
    ch.close()
    del rest


def main():
    r = Runner()
    with tmpdir() as d:
        sock = os.path.join(d, "plugin.sock")
        srv = Proc([peer("server"), sock])
        srv.expect("READY")
        with grpc.insecure_channel("unix:" + sock) as ch:
            for t in (test_options, test_allocate, test_list_and_watch, test_stream_to_end, test_empty_stream,
                      test_error_status, test_unknown_method, test_deadline, test_oversize_reply,
                      test_oversize_request, test_big_echo_and_concurrency, test_plugin_registration,
                      test_dra_prepare):
                r.run(t, ch, srv)
        r.run(test_graceful_shutdown, sock, srv)
        if srv.p.poll() is None:
            srv.p.kill()
    print("%d failed" % r.failed)
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
