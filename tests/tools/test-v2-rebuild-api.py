# SPDX-License-Identifier: Apache-2.0
"""A corrupt driver checkpoint with the API server as the claims' source
(--kubeconfig, tests/kube/fakeapi.py): after one changed byte and a
restart, the claim still holds its GPU (rebuilt from its CDI spec), and the
kubelet's next NodePrepareResources reads the claim from the API and
answers in full (request names), instead of failing "claim not read"."""
import importlib.util
import os
import subprocess
import sys
import tempfile

import grpc

SRC = os.environ["DP_SOURCE_DIR"]
KUBE = os.path.join(SRC, "tests", "kube")
sys.path.insert(0, KUBE)
_s = importlib.util.spec_from_file_location("kubeapi", os.path.join(KUBE, "test-api.py"))
ka = importlib.util.module_from_spec(_s)
_s.loader.exec_module(ka)


def allocate(sock, ids):
    with grpc.insecure_channel("unix:" + sock) as ch:
        req = ka.pb["AllocateRequest"]()
        req.container_requests.add(devices_ids=ids)
        return ch.unary_unary("/v1beta1.DevicePlugin/Allocate", request_serializer=ka.ser,
                              response_deserializer=ka.pb["AllocateResponse"].FromString)(req, timeout=10)


def main():
    t = tempfile.mkdtemp(prefix="dp-v2-rebuild-api.")
    api = ka.FakeAPI(ka.TOKEN, "node-a", ka.NODE_UID, t)
    port = api.start()
    kc = os.path.join(t, "kubeconfig")
    with open(kc, "w") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                "clusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:%d\n"
                "    certificate-authority: ca.crt\n"
                "users:\n- name: agent\n  user:\n    token: %s\n"
                "contexts:\n- name: test\n  context: {cluster: fake, user: agent}\n" % (port, ka.TOKEN))
    d = {k: os.path.join(t, k) for k in ("reg", "plugins", "cdi", "st", "dp")}
    args = [ka.DEVPLANE, "agent", "--dra", "--node-name", "node-a", "--profile", "example-gpu",
            "--registry-dir", d["reg"], "--plugins-dir", d["plugins"], "--cdi-dir", d["cdi"],
            "--state-dir", d["st"], "--plugin-dir", d["dp"], "--api-backoff-max-ms", "400",
            "--log-format", "json", "--kubeconfig", kc]
    dra_sock = os.path.join(d["plugins"], "gpu.example.com", "dra.sock")
    v1sock = os.path.join(d["dp"], "devplane-example.com_gpu.sock")
    log = os.path.join(t, "agent.log")
    agent = ka.Agent(args, log)
    ok = False
    try:
        agent.wait_log(r"serving example.com/gpu")
        api.claims[("default", "c0")] = ka.claim("c0", "uid-c0", "gpu-0")
        r = ka.prepare(dra_sock, [("c0", "uid-c0")])
        assert not r.claims["uid-c0"].error, r
        agent.stop()
        ck = os.path.join(d["plugins"], "gpu.example.com", "checkpoint.json")
        raw = bytearray(open(ck, "rb").read())
        raw[raw.index(b"uid-c0") + 4] = ord("x")
        open(ck, "wb").write(raw)
        agent = ka.Agent(args, log)
        agent.wait_log(r"serving example.com/gpu")
        devs = open(os.path.join(d["st"], "devices")).read().split("\n")
        u0 = devs[devs.index("gpu-0") + 1]
        try:
            allocate(v1sock, [u0])
            raise AssertionError("gpu-0 allocated through V1 after the driver checkpoint was corrupted")
        except grpc.RpcError as e:
            assert "held through V2 by claim / (uid-c0)" in e.details(), e.details()
        print("ok - one changed byte in the driver checkpoint: c0 rebuilt from its CDI spec, gpu-0 still held")
        r = ka.prepare(dra_sock, [("c0", "uid-c0")])
        dev = r.claims["uid-c0"].devices
        assert not r.claims["uid-c0"].error and list(dev[0].request_names) == ["gpu"], r
        try:
            allocate(v1sock, [u0])
            raise AssertionError("gpu-0 allocated through V1")
        except grpc.RpcError as e:
            assert "held through V2 by claim default/c0 (uid-c0)" in e.details(), e.details()
        print("ok - the kubelet prepares c0 again: read from the API, answered in full, held under its name")
        agent.stop()
        ok = True
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        if not ok:
            sys.stderr.write(open(log).read()[-4000:])
        api.stop() if hasattr(api, "stop") else None
        subprocess.run(["rm", "-rf", t])


if __name__ == "__main__":
    main()
