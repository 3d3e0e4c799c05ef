# SPDX-License-Identifier: Apache-2.0
"""`devplane agent --metrics-addr` and `--log-format`, scraped with urllib:
the text exposition format (HELP/TYPE, histogram buckets cumulative and
ending in +Inf), devices by health following `agent health set`, 404 for
other paths, HEAD; text logs stay plain, and the CLI refuses bad values
(metrics address, log format, kubeconfig: the error names file and field,
exit status 2). The API-side metrics are covered by tests/kube/test-api.py."""
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request

DEVPLANE = os.environ["DEVPLANE"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def scrape(port, method="GET", path="/metrics"):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.headers, r.read().decode()


def parse(text):
    out, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, t = line.split(" ")
            types[name] = t
        elif line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            out[k] = float(v)
            base = re.sub(r"(_bucket|_sum|_count)?(\{.*\})?$", "", k)
            assert base in types, "sample %s without # TYPE" % k
    return out, types


def main():
    t = tempfile.mkdtemp(prefix="dp-agent-metrics.")
    port = free_port()
    args = [DEVPLANE, "agent", "--profile", "example-gpu", "--node-name", "node-m", "--plugin-dir",
            os.path.join(t, "dp"), "--state-dir", os.path.join(t, "st"), "--metrics-addr", "127.0.0.1:%d" % port]
    lines, cond = [], threading.Condition()
    p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)

    def pump():
        for line in p.stderr:
            with cond:
                lines.append(line.rstrip("\n"))
                cond.notify_all()
    threading.Thread(target=pump, daemon=True).start()

    def wait_log(rx, since=0):
        with cond:
            assert cond.wait_for(lambda: any(re.search(rx, l) for l in lines[since:]), timeout=30), lines[-5:]
    try:
        wait_log(r"serving example.com/gpu")
        st, hdr, body = scrape(port)
        assert st == 200 and hdr["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8", hdr
        m, types = parse(body)
        assert m['devplane_devices{health="healthy"}'] == 8 and m['devplane_devices{health="unhealthy"}'] == 0, m
        assert types["devplane_dra_prepare_duration_seconds"] == "histogram"
        assert types["devplane_api_errors_total"] == "counter" and m["devplane_api_errors_total"] == 0
        buckets = [v for k, v in m.items() if k.startswith("devplane_dra_unprepare_duration_seconds_bucket")]
        assert buckets == sorted(buckets) and 'devplane_dra_unprepare_duration_seconds_bucket{le="+Inf"}' in m
        print("ok - /metrics: text format 0.0.4, every sample typed, 8 devices healthy, empty histograms")

        mark = len(lines)
        subprocess.run([DEVPLANE, "agent", "health", "--state-dir", os.path.join(t, "st"), "set", "gpu-2",
                        "unhealthy"], check=True)
        wait_log(r"7 of 8 devices healthy", since=mark)
        m, _ = parse(scrape(port)[2])
        assert m['devplane_devices{health="unhealthy"}'] == 1, m
        assert m['devplane_v1_resource_devices{resource="example.com/gpu",health="unhealthy"}'] == 1, m
        print("ok - gpu-2 unhealthy: devplane_devices{health=\"unhealthy\"} 1, per-resource gauge too")

        try:
            scrape(port, path="/")
            raise AssertionError("/ answered 200")
        except urllib.error.HTTPError as e:
            assert e.code == 404
        st, _, body = scrape(port, method="HEAD")
        assert st == 200 and body == ""
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"X" * 9000)
        try:
            assert s.recv(100) == b""  # dropped: request larger than 8 KiB
        except ConnectionResetError:
            pass  # closed with bytes still unread: reset instead of FIN, dropped all the same
        s.close()
        assert scrape(port)[0] == 200
        print("ok - 404 off /metrics, HEAD without body, an oversized request dropped, listener still serving")

        assert all(re.match(r"^devplane\[agent\] (info|warning|error|debug): ", l) for l in lines), lines[:3]
        print("ok - text logs: %d lines, one event each" % len(lines))
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()

    def refused(extra, needle):
        r = subprocess.run(args[:2] + ["--plugin-dir", os.path.join(t, "x"), "--state-dir", os.path.join(t, "y")]
                           + extra, capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and needle in r.stderr, (extra, r.returncode, r.stderr)
        return r.stderr.strip().splitlines()[-1]
    refused(["--metrics-addr", "nonsense"], "--metrics-addr nonsense")
    refused(["--log-format", "xml"], "--log-format xml")
    refused(["--kubeconfig", os.path.join(t, "missing")], "need --dra")
    kc = os.path.join(t, "kc.yaml")
    with open(kc, "w") as f:
        f.write("current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
                "clusters: [{name: k, cluster: {server: 'https://h:6443'}}]\n"
                "users: [{name: u, user: {exec: {command: get-token}}}]\n")
    msg = refused(["--dra", "--kubeconfig", kc, "--registry-dir", os.path.join(t, "r"), "--plugins-dir",
                   os.path.join(t, "p"), "--cdi-dir", os.path.join(t, "c")], kc + ": users[name=u].user.exec")
    refused(["--dra", "--kubeconfig", os.path.join(t, "missing"), "--registry-dir", os.path.join(t, "r"),
             "--plugins-dir", os.path.join(t, "p"), "--cdi-dir", os.path.join(t, "c")], os.path.join(t, "missing"))
    print("ok - refused with exit 2: bad --metrics-addr, --log-format, --kubeconfig without --dra, "
          "a kubeconfig with exec (%s), a missing kubeconfig" % msg.split("error: ", 1)[-1])
    subprocess.run(["rm", "-rf", t])


if __name__ == "__main__":
    main()
