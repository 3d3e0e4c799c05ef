# SPDX-License-Identifier: Apache-2.0
"""devplane's gRPC client (grpc-peer-client) -> a Python grpcio server."""
import os
import subprocess
import sys
import threading
from concurrent import futures

import grpc

from interop import Runner, peer, tmpdir
from pbdefs import pb

release = threading.Event()  # set at the end: frees handlers still waiting
registered = []


def echo(req, ctx):
    return req[::-1]


def stream(req, ctx):
    for i in range(5):
        yield b"m%d" % i


def fail(req, ctx):
    ctx.abort(grpc.StatusCode.NOT_FOUND, "no such gpu: 100% \u00fc\n")


def slow(req, ctx):
    release.wait(60)
    return b"late"


def big(req, ctx):
    return b"\0" * (4 * 1024 * 1024 + 1)


def register(req, ctx):
    r = pb["RegisterRequest"].FromString(req)
    if r.version != "v1beta1":
        ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad version " + r.version)
    registered.append(r)
    return b""  # v1beta1.Empty


def meta(req, ctx):
    # what our client put on the wire
    md = dict(ctx.invocation_metadata())
    return ("%s|%s" % (md.get("user-agent", ""), ctx.time_remaining() is not None)).encode()


def serve(sock):
    s = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    s.add_generic_rpc_handlers((
        grpc.method_handlers_generic_handler("test.Test", {
            "Echo": grpc.unary_unary_rpc_method_handler(echo),
            "Stream": grpc.unary_stream_rpc_method_handler(stream),
            "Fail": grpc.unary_unary_rpc_method_handler(fail),
            "Slow": grpc.unary_unary_rpc_method_handler(slow),
            "Big": grpc.unary_unary_rpc_method_handler(big),
            "Meta": grpc.unary_unary_rpc_method_handler(meta),
        }),
        grpc.method_handlers_generic_handler("v1beta1.Registration", {
            "Register": grpc.unary_unary_rpc_method_handler(register),
        }),
    ))
    s.add_insecure_port("unix:" + sock)
    s.start()
    return s


def client(sock, path, mode, timeout_ms=0, payload=""):
    out = subprocess.run([peer("client"), sock, path, mode, str(timeout_ms), payload], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    msgs = [l[4:] for l in out.stdout.splitlines() if l.startswith("MSG ")]
    status = [l[7:] for l in out.stdout.splitlines() if l.startswith("STATUS ")]
    return msgs, status


def test_unary(sock):
    msgs, st = client(sock, "/test.Test/Echo", "unary", 5000, "abcdef")
    assert msgs == [b"fedcba".hex()] and st == ["0 "], (msgs, st)


def test_stream(sock):
    msgs, st = client(sock, "/test.Test/Stream", "stream", 0, "x")
    assert msgs == [(b"m%d" % i).hex() for i in range(5)] and st == ["0 "], (msgs, st)


def test_concurrent(sock):
    msgs, st = client(sock, "/test.Test/Echo", "concurrent", 5000, "xyz")
    assert msgs == [b"zyx".hex()] * 20 and st == ["0 "] * 20, (msgs, st)


def test_error_status(sock):
    msgs, st = client(sock, "/test.Test/Fail", "unary", 5000)
    assert msgs == [] and st == ["5 no such gpu: 100% \u00fc"], st


def test_deadline(sock):
    msgs, st = client(sock, "/test.Test/Slow", "unary", 200)
    assert st and st[0].startswith("4 "), st


def test_unknown_method(sock):
    msgs, st = client(sock, "/test.Test/Nope", "unary", 5000)
    assert st and st[0].startswith("12 "), st


def test_oversize_reply(sock):
    msgs, st = client(sock, "/test.Test/Big", "unary", 10000)
    assert msgs == [] and st and st[0].startswith("8 "), st


def test_register(sock):
    msgs, st = client(sock, "/v1beta1.Registration/Register", "register", 5000, "vendor.com/gpu")
    assert st == ["0 "], st
    r = registered[-1]
    assert (r.endpoint, r.resource_name) == ("peer.sock", "vendor.com/gpu"), r
    assert r.options.get_preferred_allocation_available and not r.options.pre_start_required


def test_headers(sock):
    msgs, st = client(sock, "/test.Test/Meta", "unary", 5000)
    text = bytes.fromhex(msgs[0]).decode()
    assert text.startswith("grpc-c-devplane/") and text.endswith("|True"), text


def test_no_server(sock):
    out = subprocess.run([peer("client"), sock + ".missing", "/a/b", "unary"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 1 and "No such file" in out.stderr, out.stderr


def main():
    r = Runner()
    with tmpdir() as d:
        sock = os.path.join(d, "py.sock")
        s = serve(sock)
        for t in (test_unary, test_stream, test_concurrent, test_error_status, test_deadline, test_unknown_method,
                  test_oversize_reply, test_register, test_headers, test_no_server):
            r.run(t, sock)
        release.set()
        s.stop(None).wait()
    print("%d failed" % r.failed)
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
