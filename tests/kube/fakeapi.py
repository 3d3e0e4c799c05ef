# SPDX-License-Identifier: Apache-2.0
"""A stand-in for kube-apiserver, for the resources the agent uses, and the
cluster-wide lists `devplane simulate --kubeconfig` reads.

A real kube-apiserver (with etcd) cannot run in this test environment, so
this HTTPS server (python3 http.server + ssl, certificates made at test time
with the openssl CLI) plays it for: GET /api/v1/nodes/NAME; LIST, POST, PUT,
DELETE /apis/resource.k8s.io/v1/resourceslices[/NAME]; GET
/apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME. Every request
is checked: method and path, Authorization (bearer token), Accept and
Content-Type, and every body against the resource.k8s.io/v1 ResourceSlice
schema (required fields, driver/pool/nodeName, the Kubernetes limits on
devices, attributes, taints, counters). A request that breaks a rule is
answered 400/422 as the API server would and recorded in `violations`;
the tests assert there are none. Writes follow the API server's rules:
resourceVersion on update (stale: 409), name conflicts on create (409),
fieldSelector on spec.nodeName and spec.driver for lists.

Cluster-wide lists (`objects`, by resource): answered as a real server
answers a LIST: kind <Kind>List, apiVersion, metadata.resourceVersion, items
without kind/apiVersion, pages of at most `limit` items (fewer when
`page_size` is set, as a server may) with metadata.continue; 410 Expired for
a continue token when `expire_continue` is set, 403 for resources in
`forbidden`, 404 for resources in `missing` (an API the cluster does not
serve).
"""
import json
import re
import socket
import ssl
import subprocess
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUALIFIED = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z_][A-Za-z0-9_]*$")
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
CLAIM_RE = re.compile(r"^/apis/resource\.k8s\.io/v1/namespaces/([a-z0-9-]+)/resourceclaims/([a-z0-9.-]+)$")
NODE_RE = re.compile(r"^/api/v1/nodes/([a-z0-9.-]+)$")
# path -> (resource, apiVersion, list kind)
LISTS = {
    "/api/v1/nodes": ("nodes", "v1", "NodeList"),
    "/api/v1/pods": ("pods", "v1", "PodList"),
    SLICES: ("resourceslices", "resource.k8s.io/v1", "ResourceSliceList"),
    "/apis/resource.k8s.io/v1/resourceclaims": ("resourceclaims", "resource.k8s.io/v1", "ResourceClaimList"),
    "/apis/resource.k8s.io/v1/resourceclaimtemplates": ("resourceclaimtemplates", "resource.k8s.io/v1",
                                                        "ResourceClaimTemplateList"),
    "/apis/resource.k8s.io/v1/deviceclasses": ("deviceclasses", "resource.k8s.io/v1", "DeviceClassList"),
    "/apis/resource.k8s.io/v1beta2/devicetaintrules": ("devicetaintrules", "resource.k8s.io/v1beta2",
                                                       "DeviceTaintRuleList"),
}

DRA_GROUP = "/apis/resource.k8s.io"


def _dra_lists():
    """Cluster-wide DRA lists at the older versions (1.32 serves v1beta1,
    1.33 v1beta1 and v1beta2, DeviceTaintRule came at v1alpha3); which of
    them a FakeAPI serves is its dra_versions."""
    kinds = {"resourceslices": "ResourceSlice", "resourceclaims": "ResourceClaim",
             "resourceclaimtemplates": "ResourceClaimTemplate", "deviceclasses": "DeviceClass"}
    for v in ("v1beta1", "v1beta2"):
        for res, kind in kinds.items():
            LISTS.setdefault("%s/%s/%s" % (DRA_GROUP, v, res), (res, "resource.k8s.io/" + v, kind + "List"))
    LISTS["%s/v1alpha3/devicetaintrules" % DRA_GROUP] = ("devicetaintrules", "resource.k8s.io/v1alpha3",
                                                          "DeviceTaintRuleList")


_dra_lists()

SPEC_FIELDS = {"driver", "pool", "nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection", "devices",
               "sharedCounters"}
DEVICE_FIELDS = {"name", "attributes", "capacity", "consumesCounters", "nodeName", "nodeSelector", "allNodes",
                 "taints", "bindsToNode", "bindingConditions", "bindingFailureConditions", "allowMultipleAllocations"}


def make_certs(d):
    """A CA and a server certificate for 127.0.0.1/localhost, by the openssl CLI."""
    def run(*a):
        subprocess.run(a, check=True, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("openssl", "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=devplane-test-ca")
    run("openssl", "req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    with open(d + "/san.ext", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.crt", "-days", "2", "-extfile", "san.ext")
    return d + "/ca.crt", d + "/server.crt", d + "/server.key"


def check_slice(o, node):
    """The ResourceSlice rules the API server's validation applies (subset)."""
    errs = []
    if o.get("apiVersion") != "resource.k8s.io/v1" or o.get("kind") != "ResourceSlice":
        errs.append("apiVersion/kind: %r/%r" % (o.get("apiVersion"), o.get("kind")))
    meta, spec = o.get("metadata") or {}, o.get("spec")
    name = meta.get("name", "")
    if not DNS_SUBDOMAIN.match(name) or len(name) > 253:
        errs.append("metadata.name %r" % name)
    owners = meta.get("ownerReferences") or []
    if len(owners) != 1 or {k: owners[0].get(k) for k in ("apiVersion", "kind", "name")} != \
            {"apiVersion": "v1", "kind": "Node", "name": node} or not owners[0].get("uid") \
            or owners[0].get("controller") is not True:
        errs.append("metadata.ownerReferences %r" % owners)
    if not isinstance(spec, dict):
        return errs + ["spec: required"]
    unknown = set(spec) - SPEC_FIELDS
    if unknown:
        errs.append("spec: unknown fields %s" % sorted(unknown))
    drv = spec.get("driver", "")
    if not DNS_SUBDOMAIN.match(drv) or len(drv) > 63:
        errs.append("spec.driver %r" % drv)
    pool = spec.get("pool") or {}
    if not pool.get("name") or not isinstance(pool.get("generation"), int) or pool["generation"] < 0 or \
            not isinstance(pool.get("resourceSliceCount"), int) or pool["resourceSliceCount"] < 1:
        errs.append("spec.pool %r" % pool)
    sel = [k for k in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection") if spec.get(k)]
    if len(sel) != 1:
        errs.append("spec: exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection: %s" % sel)
    devices = spec.get("devices") or []
    counters = spec.get("sharedCounters") or []
    if devices and counters:
        errs.append("spec: devices and sharedCounters are exclusive (1.35+)")
    if len(counters) > 8:
        errs.append("spec.sharedCounters: %d > 8" % len(counters))
    limit = 64 if any(d.get("taints") or d.get("consumesCounters") for d in devices) else 128
    if len(devices) > limit:
        errs.append("spec.devices: %d > %d" % (len(devices), limit))
    seen = set()
    for i, d in enumerate(devices):
        p = "spec.devices[%d]" % i
        if set(d) - DEVICE_FIELDS:
            errs.append("%s: unknown fields %s" % (p, sorted(set(d) - DEVICE_FIELDS)))
        n = d.get("name", "")
        if not DNS_LABEL.match(n) or len(n) > 63 or n in seen:
            errs.append("%s.name %r" % (p, n))
        seen.add(n)
        attrs, caps = d.get("attributes") or {}, d.get("capacity") or {}
        if len(attrs) + len(caps) > 32:
            errs.append("%s: %d attributes and capacities > 32" % (p, len(attrs) + len(caps)))
        for k, v in attrs.items():
            if not QUALIFIED.match(k) or not isinstance(v, dict) or \
                    len([t for t in ("int", "bool", "string", "version") if t in v]) != 1:
                errs.append("%s.attributes[%s] %r" % (p, k, v))
            elif "string" in v and len(v["string"]) > 64:
                errs.append("%s.attributes[%s]: longer than 64" % (p, k))
        for k, v in caps.items():
            if not QUALIFIED.match(k) or not isinstance(v, dict) or not isinstance(v.get("value"), str):
                errs.append("%s.capacity[%s] %r" % (p, k, v))
        taints = d.get("taints") or []
        if len(taints) > 16:
            errs.append("%s.taints: %d > 16" % (p, len(taints)))
        for t in taints:
            if not t.get("key") or t.get("effect") not in ("NoSchedule", "NoExecute", "None"):
                errs.append("%s.taints %r" % (p, t))
    return errs


class FakeAPI:
    # resource.k8s.io versions served (discovery and lists; a test assigns
    # its own list, [] for DRA off): route_dra_versions
    dra_versions = ("v1", "v1beta2", "v1beta1")

    def __init__(self, token, node, node_uid, certdir):
        self.token, self.node, self.node_uid = token, node, node_uid
        self.ca, self.crt, self.key = make_certs(certdir)
        self.lock = threading.Condition()
        self.slices = {}       # name -> object
        self.claims = {}       # (ns, name) -> object
        self.rv = 100
        self.log = []          # (method, path, status)
        self.violations = []
        self.conflicts = 0     # answer this many PUTs with 409 (someone else wrote)
        self.httpd = None
        self.port = None
        self.conns = set()     # open connections (closed by stop(), keep-alive included)
        self.events = []       # (resourceVersion, type, object) for watches
        self.stopping = False
        self.objects = {}      # resource -> [object] for cluster-wide lists
        self.page_size = None  # answer at most this many items per page (below limit)
        self.expire_continue = False
        self.forbidden = set()
        self.missing = set()
        self.node_labels = {}  # metadata.labels of the node
        self.hostile = None    # a watch body writer instead of the events (hostile_watch below)

    # -- life cycle --
    def start(self, port=0):
        api = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def setup(self):
                super().setup()
                with api.lock:
                    api.conns.add(self.connection)

            def finish(self):
                with api.lock:
                    api.conns.discard(self.connection)
                super().finish()

            def do_GET(self):
                api.handle(self, "GET")

            def do_POST(self):
                api.handle(self, "POST")

            def do_PUT(self):
                api.handle(self, "PUT")

            def do_DELETE(self):
                api.handle(self, "DELETE")

            def do_PATCH(self):
                api.handle(self, "PATCH")

        ThreadingHTTPServer.allow_reuse_address = True
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), H)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.crt, self.key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self.port

    def stop(self):
        """Down: no listener, and every open connection reset."""
        with self.lock:
            self.stopping = True
            self.lock.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.httpd = None
        with self.lock:
            for c in list(self.conns):
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.conns.clear()
            self.stopping = False

    def wait(self, cond, timeout=30):
        """Wait until cond() holds (checked on every request the server answers)."""
        with self.lock:
            if not self.lock.wait_for(cond, timeout=timeout):
                raise AssertionError("timed out waiting; requests: %s" % self.log[-12:])

    # -- requests --
    def reply(self, h, status, obj):
        body = json.dumps(obj).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def status(self, h, code, reason, msg):
        self.reply(h, code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg,
                             "reason": reason, "code": code})

    def violate(self, h, method, path, msg, code=400):
        self.violations.append("%s %s: %s" % (method, path, msg))
        self.status(h, code, "BadRequest" if code == 400 else "Invalid", msg)
        return code

    def handle(self, h, method):
        n = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(n) if n else b""
        u = urllib.parse.urlsplit(h.path)
        with self.lock:
            code = self.route(h, method, u.path, urllib.parse.parse_qs(u.query), raw)
            if code is not None:
                self.log.append((method, h.path, code))
            self.lock.notify_all()

    def route(self, h, method, path, q, raw):
        if h.headers.get("Authorization") != "Bearer " + self.token:
            self.violations.append("%s %s: Authorization %r" % (method, path, h.headers.get("Authorization")))
            self.status(h, 401, "Unauthorized", "Unauthorized")
            return 401
        if "application/json" not in (h.headers.get("Accept") or ""):
            return self.violate(h, method, path, "Accept %r" % h.headers.get("Accept"))
        if method in ("POST", "PUT"):
            if h.headers.get("Content-Type") != "application/json":
                return self.violate(h, method, path, "Content-Type %r" % h.headers.get("Content-Type"))
            try:
                body = json.loads(raw)
            except ValueError as e:
                return self.violate(h, method, path, "body is not JSON: %s" % e)
        elif raw:
            return self.violate(h, method, path, "unexpected body")
        code = self.route_dra_versions(h, method, path)
        if code is not None:
            return code
        if path in LISTS and method == "GET" and (path != SLICES or not q.get("fieldSelector")):
            return self.cluster_list(h, path, q)
        m = NODE_RE.match(path)
        if m and method == "GET":
            if m.group(1) != self.node:
                self.status(h, 404, "NotFound", 'nodes "%s" not found' % m.group(1))
                return 404
            self.reply(h, 200, {"apiVersion": "v1", "kind": "Node",
                                "metadata": {"name": self.node, "uid": self.node_uid, "resourceVersion": "1",
                                             "labels": self.node_labels}})
            return 200
        m = CLAIM_RE.match(path)
        if m and method == "GET":
            c = self.claims.get((m.group(1), m.group(2)))
            if not c:
                self.status(h, 404, "NotFound", 'resourceclaims.resource.k8s.io "%s" not found' % m.group(2))
                return 404
            self.reply(h, 200, c)
            return 200
        if path == SLICES and method == "GET":
            fs = q.get("fieldSelector", [""])[0]
            want = dict(kv.split("=", 1) for kv in fs.split(",") if "=" in kv)
            if set(want) != {"spec.nodeName", "spec.driver"} or want["spec.nodeName"] != self.node:
                return self.violate(h, method, path, "fieldSelector %r: want spec.nodeName and spec.driver" % fs)
            if q.get("watch", [""])[0] == "true":
                return self.watch(h, path, q, want)
            items = [o for o in self.slices.values() if o["spec"].get("nodeName") == want["spec.nodeName"]
                     and o["spec"]["driver"] == want["spec.driver"]]
            self.reply(h, 200, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
                                "metadata": {"resourceVersion": str(self.rv)}, "items": items})
            return 200
        if path == SLICES and method == "POST":
            errs = check_slice(body, self.node)
            if "resourceVersion" in body.get("metadata", {}):
                errs.append("metadata.resourceVersion must not be set on create")
            if errs:
                return self.violate(h, method, path, "; ".join(errs), 422)
            name = body["metadata"]["name"]
            if name in self.slices:
                self.status(h, 409, "AlreadyExists", 'resourceslices.resource.k8s.io "%s" already exists' % name)
                return 409
            return self.store(h, body, 201)
        if path.startswith(SLICES + "/"):
            name = path[len(SLICES) + 1:]
            cur = self.slices.get(name)
            if method == "DELETE":
                if not cur:
                    self.status(h, 404, "NotFound", "not found")
                    return 404
                self.delete(name)
                self.reply(h, 200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
                return 200
            if method == "PUT":
                errs = check_slice(body, self.node)
                if body.get("metadata", {}).get("name") != name:
                    errs.append("metadata.name does not match the path")
                if errs:
                    return self.violate(h, method, path, "; ".join(errs), 422)
                if not cur:
                    self.status(h, 404, "NotFound", "not found")
                    return 404
                if self.conflicts > 0:
                    # Someone else wrote the object meanwhile.
                    self.conflicts -= 1
                    self.rv += 1
                    cur["metadata"]["resourceVersion"] = str(self.rv)
                    self.events.append((self.rv, "MODIFIED", json.loads(json.dumps(cur))))
                if body["metadata"].get("resourceVersion") != cur["metadata"]["resourceVersion"]:
                    self.status(h, 409, "Conflict", 'Operation cannot be fulfilled on resourceslices.resource.k8s.io '
                                '"%s": the object has been modified; please apply your changes to the latest '
                                'version and try again' % name)
                    return 409
                body["metadata"]["uid"] = cur["metadata"]["uid"]
                return self.store(h, body, 200)
        return self.violate(h, method, path, "not an endpoint the agent should use", 404)

    def route_dra_versions(self, h, method, path):
        """resource.k8s.io as a server of a given release serves it: the
        discovery document (GET /apis/resource.k8s.io) lists dra_versions, and
        a version not among them answers 404. None: not such a request."""
        if method != "GET" or not path.startswith(DRA_GROUP):
            return None
        if path == DRA_GROUP:
            if not self.dra_versions:
                self.status(h, 404, "NotFound", "the server could not find the requested resource")
                return 404
            vs = [{"groupVersion": "resource.k8s.io/" + v, "version": v} for v in self.dra_versions]
            self.reply(h, 200, {"kind": "APIGroup", "apiVersion": "v1", "name": "resource.k8s.io",
                                "versions": vs, "preferredVersion": vs[0]})
            return 200
        version = path[len(DRA_GROUP) + 1:].split("/", 1)[0]
        if version not in self.dra_versions:
            self.status(h, 404, "NotFound", "the server could not find the requested resource")
            return 404
        return None

    def cluster_list(self, h, path, q):
        resource, api_version, kind = LISTS[path]
        if resource in self.missing:
            self.status(h, 404, "NotFound", "the server could not find the requested resource")
            return 404
        if resource in self.forbidden:
            self.status(h, 403, "Forbidden", '%s is forbidden: User "system:serviceaccount:default:viewer" cannot '
                        'list resource "%s" in API group "%s" at the cluster scope'
                        % (resource, resource, api_version.rsplit("/", 1)[0] if "/" in api_version else ""))
            return 403
        items = list(self.objects.get(resource, []))
        if resource == "resourceslices":
            items += list(self.slices.values())
        fs = q.get("fieldSelector", [""])[0]
        if resource == "pods" and fs:
            if fs != "status.phase!=Succeeded,status.phase!=Failed":
                return self.violate(h, "GET", path, "fieldSelector %r" % fs)
            items = [o for o in items if (o.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        elif fs:
            return self.violate(h, "GET", path, "fieldSelector %r on a cluster-wide list" % fs)
        try:
            limit = int(q.get("limit", ["0"])[0])
        except ValueError:
            return self.violate(h, "GET", path, "limit %r" % q.get("limit"))
        if limit <= 0:
            return self.violate(h, "GET", path, "a cluster-wide list without limit")
        start = 0
        tok = q.get("continue", [""])[0]
        if tok:
            if self.expire_continue:
                self.status(h, 410, "Expired", "The provided continue parameter is too old to display a consistent "
                            "list result. You can start a new list without the continue parameter.")
                return 410
            m = re.match(r"^([a-z]+):(\d+)$", tok)
            if not m or m.group(1) != resource:
                return self.violate(h, "GET", path, "continue token %r" % tok)
            start = int(m.group(2))
        n = min(limit, self.page_size or limit)
        page = items[start:start + n]
        meta = {"resourceVersion": str(self.rv)}
        if start + n < len(items):
            meta["continue"] = "%s:%d" % (resource, start + n)
            meta["remainingItemCount"] = len(items) - start - n
        out = []
        for o in page:  # a list's items carry neither kind nor apiVersion
            o = json.loads(json.dumps(o))
            o.pop("kind", None)
            o.pop("apiVersion", None)
            out.append(o)
        self.reply(h, 200, {"apiVersion": api_version, "kind": kind, "metadata": meta, "items": out})
        return 200

    def store(self, h, body, code):
        self.put(body)
        self.reply(h, code, body)
        return code

    # -- writes, also by "someone else" (the tests) --
    def put(self, body):
        self.rv += 1
        body["metadata"]["resourceVersion"] = str(self.rv)
        body["metadata"].setdefault("uid", "slice-uid-%d" % self.rv)
        name = body["metadata"]["name"]
        self.events.append((self.rv, "MODIFIED" if name in self.slices else "ADDED", json.loads(json.dumps(body))))
        self.slices[name] = body

    def delete(self, name):
        o = self.slices.pop(name)
        self.rv += 1
        o["metadata"]["resourceVersion"] = str(self.rv)
        self.events.append((self.rv, "DELETED", o))

    def watch(self, h, path, q, want):
        """A watch: chunked JSON lines, every event after resourceVersion,
        until the server stops (logged when it starts, as WATCH)."""
        try:
            since = int(q.get("resourceVersion", [""])[0])
        except ValueError:
            return self.violate(h, "GET", path, "watch without a resourceVersion")
        self.log.append(("WATCH", h.path, 200))
        self.lock.notify_all()  # wait() sees the watch start
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        if self.hostile:
            return self.hostile_watch(h)
        try:
            while not self.stopping and not self.hostile:
                for rv, typ, o in self.events:
                    if rv > since and o["spec"].get("nodeName") == want["spec.nodeName"] and \
                            o["spec"]["driver"] == want["spec.driver"]:
                        data = (json.dumps({"type": typ, "object": o}) + "\n").encode()
                        h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                        h.wfile.flush()
                since = max([since] + [rv for rv, _, _ in self.events])
                self.lock.wait(timeout=5)
        except OSError:
            pass
        h.close_connection = True
        return None


# ---- a hostile API server (issue 21, F2; bench/hostile_api.py) ----------------
# api.hostile = writer: every watch from then on gets writer(write) as its
# body instead of the events (a watch in progress ends). write(bytes) sends
# one HTTP chunk; the writer returns to end the body; write raises OSError
# when the agent hangs up or api.hostile changed (the connection is then
# closed mid-body). The lock is released meanwhile, so other requests are
# answered.

def _hostile_watch(self, h):
    writer = self.hostile

    def write(data):
        if self.hostile is not writer:
            raise BrokenPipeError("the hostile phase is over")
        h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    self.lock.release()
    try:
        writer(write)
        write(b"")
        h.wfile.flush()
    except OSError:
        pass
    finally:
        self.lock.acquire()
    h.close_connection = True
    return None


FakeAPI.hostile_watch = _hostile_watch
