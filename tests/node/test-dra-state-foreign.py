# SPDX-License-Identifier: Apache-2.0
"""The node's DRA state with a driver that is not devplane's (python3-grpcio
plays it: registration, NodePrepare/NodeUnprepareResources, no PreparedClaims
List), against `devplane node`:

- a node started without a state asks the driver what it holds; the driver
  answers UNIMPLEMENTED: the state stays marked "unknown for driver X" (fail
  closed: the claims it held before cannot be known), in the status and on
  disk, and is never cleared without a List;
- prepare and unprepare still work and are recorded (preparing, prepared,
  gone once the driver confirmed the unprepare);
- a claim whose pod went while the node was down is unprepared at start;
- a corrupt state file (one changed byte) is kept aside as .corrupt, never
  deleted, and the driver is marked unknown again.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.environ["DP_SOURCE_DIR"], "tests", "grpc"))
from google.protobuf import descriptor_pool, message_factory  # noqa: E402
from pbdefs import MSG, OPT, REP, STRING, _file, pb  # noqa: E402

DEVPLANE = os.environ["DEVPLANE"]
DRIVER = "foreign.example.com"
WAIT = 30


def _unprep():
    pool = descriptor_pool.DescriptorPool()
    dra = {
        "Claim": [("namespace", 1, STRING, OPT, None), ("uid", 2, STRING, OPT, None), ("name", 3, STRING, OPT, None)],
        "NodeUnprepareResourcesRequest": [("claims", 1, MSG, REP, "Claim")],
        "NodeUnprepareResourceResponse": [("error", 1, STRING, OPT, None)],
        "NodeUnprepareResourcesResponse": [("claims", 1, MSG, REP, "NodeUnprepareResourcesResponse.ClaimsEntry")],
    }
    fdp = _file("devplane_foreign_unprep.proto", "k8s.io.kubelet.pkg.apis.dra.v1", dra,
                {"NodeUnprepareResourcesResponse": [("ClaimsEntry", "NodeUnprepareResourceResponse")]})
    pool.Add(fdp)
    factory = message_factory.MessageFactory(pool)
    return {n: factory.GetPrototype(pool.FindMessageTypeByName("k8s.io.kubelet.pkg.apis.dra.v1." + n)) for n in dra}


X = _unprep()
ser = lambda m: m.SerializeToString()  # noqa: E731


class Driver:
    """Holds what it prepared, like a real driver's checkpoint."""

    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.held = set()
        self.lock = threading.Lock()

    def get_info(self, req, ctx):
        return pb["pluginregistration.PluginInfo"](type="DRAPlugin", name=DRIVER, endpoint=self.endpoint,
                                                   supported_versions=["v1.DRAPlugin"])

    def notify(self, req, ctx):
        return pb["pluginregistration.RegistrationStatusResponse"]()

    def prepare(self, req, ctx):
        resp = pb["v1.NodePrepareResourcesResponse"]()
        with self.lock:
            for c in req.claims:
                self.held.add(c.uid)
                resp.claims[c.uid].devices.add(request_names=["gpu"], pool_name="node-a", device_name="dev-0",
                                               cdi_device_ids=["foreign.example.com/dev=" + c.uid])
        return resp

    def unprepare(self, req, ctx):
        resp = X["NodeUnprepareResourcesResponse"]()
        with self.lock:
            for c in req.claims:
                self.held.discard(c.uid)
                resp.claims[c.uid].error = ""
        return resp


def serve(drv, reg_sock):
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    srv.add_generic_rpc_handlers((
        grpc.method_handlers_generic_handler("pluginregistration.Registration", {
            "GetInfo": grpc.unary_unary_rpc_method_handler(
                drv.get_info, request_deserializer=pb["pluginregistration.InfoRequest"].FromString,
                response_serializer=ser),
            "NotifyRegistrationStatus": grpc.unary_unary_rpc_method_handler(
                drv.notify, request_deserializer=pb["pluginregistration.RegistrationStatus"].FromString,
                response_serializer=ser),
        }),
        grpc.method_handlers_generic_handler("k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin", {
            "NodePrepareResources": grpc.unary_unary_rpc_method_handler(
                drv.prepare, request_deserializer=pb["v1.NodePrepareResourcesRequest"].FromString,
                response_serializer=ser),
            "NodeUnprepareResources": grpc.unary_unary_rpc_method_handler(
                drv.unprepare, request_deserializer=X["NodeUnprepareResourcesRequest"].FromString,
                response_serializer=ser),
        }),
    ))
    srv.add_insecure_port("unix:" + drv.endpoint)
    srv.add_insecure_port("unix:" + reg_sock)
    srv.start()
    return srv


POD = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: %(name)s, namespace: default, uid: uid-%(name)s}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: foreign.example.com}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: foreign.example.com, pool: node-a, device: dev-0}
---
apiVersion: v1
kind: Pod
metadata: {name: %(name)s-pod, namespace: default}
spec:
  containers:
  - {name: main, image: busybox, resources: {claims: [{name: g}]}}
  resourceClaims:
  - {name: g, resourceClaimName: %(name)s}
"""


def main():
    t = tempfile.mkdtemp(prefix="dp-dra-foreign-")
    pd, mf, reg, kp = (os.path.join(t, x) for x in ("plugins", "manifests", "registry", "kp"))
    for d in (pd, mf, reg, kp):
        os.makedirs(d)
    state = os.path.join(pd, "dra_manager_state.json")
    log = open(os.path.join(t, "node.log"), "ab")
    node = None
    srv = None
    ok = False

    def start_node():
        p = subprocess.Popen([DEVPLANE, "node", "--plugin-dir", pd, "--manifests", mf, "--node-name", "node-a",
                              "--registry-dir", reg, "--backoff-initial-ms", "100", "--backoff-max-ms", "400"],
                             stdout=log, stderr=log)
        wait("node node-a running pid=%d" % p.pid)
        return p

    def wait(*conds):
        args = [DEVPLANE, "node", "status", "--plugin-dir", pd, "--timeout", str(WAIT), "-o", "flat"]
        for c in conds:
            args += ["--wait", c]
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=WAIT + 10)
        if r.returncode != 0:
            raise AssertionError("waiting for %s:\n%s" % (conds, r.stdout.decode(errors="replace")))

    def pod(name):
        tmp = os.path.join(mf, "." + name)
        with open(tmp, "w") as f:
            f.write(POD % {"name": name})
        os.rename(tmp, os.path.join(mf, name + ".yaml"))

    unknown = "dra-state-unknown %s the node's DRA state was lost and the driver does not serve" % DRIVER
    try:
        drv = Driver(os.path.join(kp, "dra.sock"))
        srv = serve(drv, os.path.join(reg, DRIVER + "-reg.sock"))
        node = start_node()
        wait("dra-plugin %s registered" % DRIVER, "dra-state missing", unknown)
        assert DRIVER in open(state).read(), "the unknown mark is not on disk"
        print("ok - state missing, driver without PreparedClaims List: marked unknown in the status and on disk")

        pod("f0")
        wait("dra-pod default/f0-pod phase=Prepared",
             "dra-claim default/f0 uid=uid-f0 driver=%s devices=node-a/dev-0 state=prepared pods=default/f0-pod" % DRIVER)
        assert '"uid":"uid-f0"' in open(state).read()
        os.remove(os.path.join(mf, "f0.yaml"))
        wait("!dra-claim default/f0 ", unknown)
        assert "uid-f0" not in drv.held and "uid-f0" not in open(state).read()
        print("ok - prepare and unprepare through it are recorded; the unknown mark stays")

        pod("f1")
        wait("dra-pod default/f1-pod phase=Prepared")
        node.send_signal(signal.SIGKILL)
        node.wait()
        os.remove(os.path.join(mf, "f1.yaml"))
        node = start_node()
        wait("!dra-claim default/f1 ", "dra-state loaded", unknown)
        assert "uid-f1" not in drv.held, drv.held
        print("ok - pod removed while the node was down: unprepared at start (from the node's own state)")

        pod("f2")
        wait("dra-pod default/f2-pod phase=Prepared")
        node.send_signal(signal.SIGKILL)
        node.wait()
        data = bytearray(open(state, "rb").read())
        i = data.index(b"uid-f2") + 4
        data[i] = ord("9")  # uid-f2 -> uid-92: one byte
        open(state, "wb").write(bytes(data))
        node = start_node()
        wait("dra-state corrupt (kept as %s.corrupt)" % state, unknown, "dra-pod default/f2-pod phase=Prepared")
        assert open(state + ".corrupt", "rb").read() == bytes(data), "the corrupt file was not kept as it was"
        print("ok - corrupt state kept as .corrupt; the driver cannot be asked: unknown again, the pod prepared again")
        ok = True
    finally:
        if node and node.poll() is None:
            node.terminate()
            node.wait(timeout=30)
        if srv:
            srv.stop(0)
        log.close()
        if not ok:
            sys.stderr.write(open(os.path.join(t, "node.log"), errors="replace").read()[-6000:])
        shutil.rmtree(t, ignore_errors=True)


if __name__ == "__main__":
    main()
