# SPDX-License-Identifier: Apache-2.0
"""`devplane agent --dra --kubeconfig` against a fake API server over HTTPS.

A real kube-apiserver cannot run here (no etcd, no cluster in the test
environment), so tests/kube/fakeapi.py plays it: it checks every request's
method, path, headers and body against the resource.k8s.io/v1 schema and
records violations, which must stay empty. The real devplane binary runs
with a kubeconfig (bearer token, CA file) pointing at it. Covered:
  1. initial publication: GET node (uid), LIST with fieldSelector, POST,
     ownerReference to the Node, generation;
  2. claims read from the API: prepare, UID mismatch, not found;
  3. `agent health set` -> taint: PUT with resourceVersion and a new
     generation; the taint splits the pool into two slices (POST);
  4. 409 conflict on update -> re-LIST and retry; recovery deletes the
     slice that is no longer needed (DELETE); the watch: a slice deleted or
     changed by someone else is published again;
  5. API server down: backoff retries, V1 Allocate and an already-prepared
     claim answered at once while a new claim's read is pending, which then
     fails with "unreachable"; server back -> the change is published;
  6. metrics (API errors, devices by health, prepare histogram) and JSON logs;
  7. restart with in-cluster credentials (service-account token file and
     CA, KUBERNETES_SERVICE_HOST/PORT) and fewer devices: LIST finds the old
     slices, the vanished devices' slice is deleted, the generation
     continues above the server's.
"""
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import grpc

sys.path.insert(0, os.path.join(os.environ["DP_SOURCE_DIR"], "tests", "grpc"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbdefs import pb  # noqa: E402
from fakeapi import FakeAPI  # noqa: E402

DEVPLANE = os.environ["DEVPLANE"]
SRC = os.environ["DP_SOURCE_DIR"]
DRA_V1 = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
ser = lambda m: m.SerializeToString()  # noqa: E731
TOKEN = "test-token-0123456789"
NODE_UID = "6f1c3d2e-0000-4000-8000-00000000node"


def claim(name, uid, dev):
    """A claim as kube-apiserver returns it after scheduling (server-set
    metadata, managedFields, nodeSelector, reservedFor included)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "77",
                         "generation": 1, "creationTimestamp": "2026-01-01T00:00:00Z",
                         "finalizers": ["resource.kubernetes.io/delete-protection"],
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pod-uid",
                                              "controller": True, "blockOwnerDeletion": True}],
                         "managedFields": [{"manager": "kube-scheduler", "operation": "Update",
                                            "apiVersion": "resource.k8s.io/v1", "time": "2026-01-01T00:00:00Z",
                                            "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}},
                                            "subresource": "status"}]},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]}},
            "status": {"allocation": {
                "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-a",
                                         "device": dev}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]}},
                "reservedFor": [{"resource": "pods", "name": "p", "uid": "pod-uid"}]}}


class Agent:
    """The agent process; its stderr (JSON lines) is read by a thread so
    tests wait on log events instead of sleeping."""

    def __init__(self, args, logpath, env=None):
        self.lines, self.cond = [], threading.Condition()
        self.logf = open(logpath, "a")
        self.p = subprocess.Popen(args, stdout=self.logf, stderr=subprocess.PIPE, text=True, env=env)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.p.stderr:
            self.logf.write(line)
            self.logf.flush()
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def mark(self):
        with self.cond:
            return len(self.lines)

    def wait_log(self, pattern, count=1, since=0, timeout=30):
        rx = re.compile(pattern)
        with self.cond:
            ok = self.cond.wait_for(lambda: sum(1 for l in self.lines[since:] if rx.search(l)) >= count,
                                    timeout=timeout)
        if not ok:
            raise AssertionError("no log line matching %r (x%d); last: %s" % (pattern, count, self.lines[-5:]))

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(timeout=30)
        assert rc == 0, rc


def prepare(sock, claims, timeout=20):
    with grpc.insecure_channel("unix:" + sock) as ch:
        call = ch.unary_unary(DRA_V1 + "NodePrepareResources", request_serializer=ser,
                              response_deserializer=pb["v1.NodePrepareResourcesResponse"].FromString)
        req = pb["v1.NodePrepareResourcesRequest"]()
        for name, uid in claims:
            req.claims.add(namespace="default", uid=uid, name=name)
        return call(req, timeout=timeout, wait_for_ready=True)


def v1_allocate(sock, ids):
    with grpc.insecure_channel("unix:" + sock) as ch:
        req = pb["AllocateRequest"]()
        req.container_requests.add(devices_ids=ids)
        return ch.unary_unary("/v1beta1.DevicePlugin/Allocate", request_serializer=ser,
                              response_deserializer=pb["AllocateResponse"].FromString)(req, timeout=10,
                                                                                      wait_for_ready=True)


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers
        out = {}
        for line in r.read().decode().splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def slices_of(api):
    return {n: o for n, o in api.slices.items() if o["spec"].get("nodeName") == "node-a"}


def gen_of(api):
    gens = {o["spec"]["pool"]["generation"] for o in slices_of(api).values()}
    assert len(gens) == 1, gens
    return gens.pop()


def tainted(api):
    return sorted(d["name"] for o in slices_of(api).values() for d in o["spec"].get("devices", []) if d.get("taints"))


def n_devices(api):
    return sum(len(o["spec"].get("devices", [])) for o in slices_of(api).values())


def main():
    t = tempfile.mkdtemp(prefix="dp-kube-api.")
    api = FakeAPI(TOKEN, "node-a", NODE_UID, t)
    port = api.start()
    kc = os.path.join(t, "kubeconfig")
    with open(kc, "w") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                "clusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:%d\n"
                "    certificate-authority: ca.crt\n"
                "users:\n- name: agent\n  user:\n    token: %s\n"
                "contexts:\n- name: test\n  context: {cluster: fake, user: agent}\n" % (port, TOKEN))
    # 100 GPUs: one slice while healthy (<= 128 devices), two once a device
    # is tainted (<= 64 per slice), so taints create and recovery deletes.
    big = os.path.join(t, "big.yaml")
    with open(os.path.join(SRC, "profiles", "example-gpu.yaml")) as f:
        text = f.read()
    assert "  - count: 8\n" in text
    with open(big, "w") as f:
        f.write(text.replace("  - count: 8\n", "  - count: 100\n"))
    d = {k: os.path.join(t, k) for k in ("reg", "plugins", "cdi", "st", "dp")}
    mport = free_port()
    common = [DEVPLANE, "agent", "--dra", "--node-name", "node-a",
              "--registry-dir", d["reg"], "--plugins-dir", d["plugins"], "--cdi-dir", d["cdi"],
              "--state-dir", d["st"], "--plugin-dir", d["dp"], "--api-backoff-max-ms", "400",
              "--log-format", "json"]
    base = common + ["--kubeconfig", kc]
    dra_sock = os.path.join(d["plugins"], "gpu.example.com", "dra.sock")
    v1sock = os.path.join(d["dp"], "devplane-example.com_gpu.sock")
    agent = Agent(base + ["--profile", big, "--metrics-addr", "127.0.0.1:%d" % mport], os.path.join(t, "agent.log"))
    ok = False
    try:
        # 1. initial publication
        api.wait(lambda: len(slices_of(api)) == 1 and n_devices(api) == 100)
        methods = [(m, p.split("?")[0]) for m, p, _ in api.log]
        assert methods[:3] == [("GET", "/api/v1/nodes/node-a"), ("GET", "/apis/resource.k8s.io/v1/resourceslices"),
                               ("POST", "/apis/resource.k8s.io/v1/resourceslices")], api.log[:4]
        assert "fieldSelector=spec.nodeName%3Dnode-a%2Cspec.driver%3Dgpu.example.com" in api.log[1][1], api.log[1]
        s0 = slices_of(api)["node-a-gpu.example.com-0"]
        assert s0["metadata"]["ownerReferences"][0]["uid"] == NODE_UID
        g1 = gen_of(api)
        assert g1 >= 1 and s0["spec"]["pool"] == {"name": "node-a", "generation": g1, "resourceSliceCount": 1}
        print("ok - published: GET node, LIST (fieldSelector nodeName+driver), POST 1 slice of 100 devices, "
              "owner Node uid, generation %d" % g1)

        # 2. claims from the API
        api.claims[("default", "c0")] = claim("c0", "uid-c0", "gpu-0")
        api.claims[("default", "c1")] = claim("c1", "uid-real", "gpu-1")
        r = prepare(dra_sock, [("c0", "uid-c0"), ("c1", "uid-c1"), ("ghost", "uid-ghost")])
        dev = r.claims["uid-c0"].devices
        assert not r.claims["uid-c0"].error and dev[0].device_name == "gpu-0", r
        assert list(dev[0].cdi_device_ids) == ["k8s.gpu.example.com/gpu=uid-c0-gpu-0"], r
        assert "uid uid-real" in r.claims["uid-c1"].error and "uid-c1" in r.claims["uid-c1"].error, r
        assert "not found" in r.claims["uid-ghost"].error, r
        assert any(m == "GET" and "/namespaces/default/resourceclaims/c0" in p for m, p, _ in api.log)
        print("ok - NodePrepareResources read claims from the API: c0 prepared (gpu-0); uid mismatch: %s; "
              "missing: %s" % (r.claims["uid-c1"].error, r.claims["uid-ghost"].error))

        # 3. taint -> update + a second slice
        n_log = len(api.log)
        subprocess.run([DEVPLANE, "agent", "health", "--state-dir", d["st"], "set", "gpu-3", "unhealthy"], check=True)
        api.wait(lambda: len(slices_of(api)) == 2 and tainted(api) == ["gpu-3"] and gen_of(api) > g1)
        g2 = gen_of(api)
        writes = [(m, p.rsplit("/", 1)[-1], c) for m, p, c in api.log[n_log:] if m in ("PUT", "POST", "DELETE")]
        assert ("PUT", "node-a-gpu.example.com-0", 200) in writes and ("POST", "resourceslices", 201) in writes, writes
        taint = [d["taints"] for o in slices_of(api).values() for d in o["spec"]["devices"] if d.get("taints")][0]
        assert taint == [{"key": "gpu.example.com/unhealthy", "effect": "NoSchedule"}], taint
        assert all(o["spec"]["pool"]["resourceSliceCount"] == 2 for o in slices_of(api).values())
        print("ok - gpu-3 unhealthy: PUT (resourceVersion) + POST, 2 slices at generation %d, taint %s" % (g2, taint))

        # 4. 409 on update -> re-list, retry; recovery deletes the extra slice
        n_log = len(api.log)
        api.conflicts = 1
        subprocess.run([DEVPLANE, "agent", "health", "--state-dir", d["st"], "set", "gpu-3", "healthy"], check=True)
        api.wait(lambda: len(slices_of(api)) == 1 and not tainted(api) and n_devices(api) == 100)
        seq = [(m, p.split("?")[0].rsplit("/", 1)[-1], c) for m, p, c in api.log[n_log:]]
        i409 = [i for i, x in enumerate(seq) if x[2] == 409]
        assert i409 and seq[i409[0] + 1][:2] == ("GET", "resourceslices"), seq
        assert ("PUT", "node-a-gpu.example.com-0", 200) in seq[i409[0]:], seq
        assert ("DELETE", "node-a-gpu.example.com-1", 200) in seq, seq
        g3 = gen_of(api)
        assert g3 > g2
        print("ok - conflict: PUT answered 409, agent re-LISTed and retried; recovered: extra slice DELETEd, "
              "1 slice at generation %d" % g3)

        # 4b. someone else deletes, then changes, our slice: the watch sees it
        n_log = len(api.log)
        last_delete = max(i for i, x in enumerate(api.log) if x[0] == "DELETE")
        api.wait(lambda: any(x[0] == "WATCH" for x in api.log[last_delete:]))  # the agent watches again
        with api.lock:
            api.delete("node-a-gpu.example.com-0")
            api.lock.notify_all()
        api.wait(lambda: "node-a-gpu.example.com-0" in slices_of(api) and n_devices(api) == 100)
        g3b = gen_of(api)
        assert g3b > g3 and ("POST", "/apis/resource.k8s.io/v1/resourceslices", 201) in api.log[n_log:], api.log[n_log:]
        with api.lock:
            o = json.loads(json.dumps(slices_of(api)["node-a-gpu.example.com-0"]))
            o["spec"]["devices"] = o["spec"]["devices"][:10]
            api.put(o)
            api.lock.notify_all()
        api.wait(lambda: n_devices(api) == 100 and gen_of(api) > g3b)
        g3 = gen_of(api)
        print("ok - watch: a slice deleted by someone else was created again (generation %d), one cut to 10 "
              "devices was written back (generation %d)" % (g3b, g3))

        # 5. API server down
        api.stop()
        mark = agent.mark()
        subprocess.run([DEVPLANE, "agent", "health", "--state-dir", d["st"], "set", "gpu-5", "unhealthy"], check=True)
        agent.wait_log(r"ResourceSlice.*retrying in", count=2, since=mark)
        api.claims[("default", "c2")] = claim("c2", "uid-c2", "gpu-2")
        pending = queue.Queue()
        threading.Thread(target=lambda: pending.put(prepare(dra_sock, [("c2", "uid-c2")], timeout=4)),
                         daemon=True).start()
        agent.wait_log(r"resourceclaims/c2: .*retrying in", since=mark)
        t0 = time.monotonic()
        devs = open(os.path.join(d["st"], "devices")).read().split("\n")
        a = v1_allocate(v1sock, [devs[devs.index("gpu-7") + 1]])
        assert len(a.container_responses) == 1
        r = prepare(dra_sock, [("c0", "uid-c0")], timeout=5)
        assert not r.claims["uid-c0"].error and r.claims["uid-c0"].devices[0].device_name == "gpu-0", r
        fast = time.monotonic() - t0
        assert pending.empty(), "the pending prepare finished before the API came back"
        r2 = pending.get(timeout=10)
        assert "unreachable" in r2.claims["uid-c2"].error, r2
        print("ok - API down: retries with backoff; V1 Allocate and prepared claim c0 answered in %.3f s while "
              "c2's read was pending; c2 then failed: %s" % (fast, r2.claims["uid-c2"].error))
        api.start(port)
        api.wait(lambda: tainted(api) == ["gpu-5"] and len(slices_of(api)) == 2)
        g4 = gen_of(api)
        agent.wait_log(r"ResourceSlices of node-a published: generation %d," % g4, since=mark)
        print("ok - API back: gpu-5's taint published (generation %d)" % g4)

        # 6. metrics and JSON logs
        m = scrape(mport)
        assert m["devplane_api_errors_total"] >= 2, m
        assert m['devplane_devices{health="unhealthy"}'] == 1 and m['devplane_devices{health="healthy"}'] == 99, m
        assert m["devplane_dra_prepare_duration_seconds_count"] >= 3, m
        assert m['devplane_dra_prepare_duration_seconds_bucket{le="+Inf"}'] == \
            m["devplane_dra_prepare_duration_seconds_count"]
        assert m["devplane_v1_allocations_total"] == 1 and m["devplane_dra_prepared_claims"] == 1, m
        assert m["devplane_resourceslice_generation"] == g4 and m["devplane_resourceslices_synced"] == 1, m
        assert 'devplane_registrations_total{path="dra"}' in m
        assert m["devplane_dra_claim_errors_total"] == 3, m
        for line in agent.lines:
            j = json.loads(line)
            assert set(j) == {"time", "level", "component", "msg"} and j["component"] == "agent", j
        print("ok - metrics: api_errors %d, devices 99 healthy/1 unhealthy, prepare histogram %d calls; "
              "%d log lines, each one JSON object" % (m["devplane_api_errors_total"],
                                                        m["devplane_dra_prepare_duration_seconds_count"],
                                                        len(agent.lines)))

        # 7. restart with fewer devices, now with in-cluster credentials
        # (service-account token file and CA, KUBERNETES_SERVICE_HOST/PORT):
        # the vanished devices' slice goes
        agent.stop()
        n_log = len(api.log)
        sa = os.path.join(t, "serviceaccount")
        os.makedirs(sa)
        with open(os.path.join(sa, "token"), "w") as f:
            f.write(TOKEN + "\n")
        subprocess.run(["cp", api.ca, os.path.join(sa, "ca.crt")], check=True)
        env = dict(os.environ, KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(port))
        agent = Agent(common + ["--in-cluster", "--service-account-dir", sa, "--profile", "example-gpu"],
                      os.path.join(t, "agent.log"), env=env)
        api.wait(lambda: len(slices_of(api)) == 1 and n_devices(api) == 8 and gen_of(api) > g4)
        seq = [(m, p.split("?")[0].rsplit("/", 1)[-1], c) for m, p, c in api.log[n_log:]]
        assert ("DELETE", "node-a-gpu.example.com-1", 200) in seq, seq
        assert tainted(api) == ["gpu-5"]
        print("ok - restart in-cluster (token file, ca.crt) with 8 devices instead of 100: old slices LISTed, "
              "one PUT, one DELETE, "
              "generation %d > %d" % (gen_of(api), g4))
        agent.stop()
        assert not api.violations, api.violations
        print("ok - every request passed the fake API server's checks (%d requests)" % len(api.log))
        ok = True
    finally:
        if agent.p.poll() is None:
            agent.p.kill()
            agent.p.wait()
        if api.httpd:
            api.stop()
        if not ok:
            sys.stderr.write(open(os.path.join(t, "agent.log")).read()[-6000:])
            sys.stderr.write("\nviolations: %s\n" % api.violations)
        subprocess.run(["rm", "-rf", t])


if __name__ == "__main__":
    main()
