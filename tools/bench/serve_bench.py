#!/usr/bin/env python3
"""Serving a Rivet model from a two-node Ray cluster on this machine, under
load from concurrent HTTP clients and Ray's handle API.

The two nodes live in network namespaces of their own, joined by a veth pair
(Ray's agents bind the host's non-loopback address even when told to use
127.0.0.1; inside a namespace they can reach nothing but each other). Every
process the cluster starts is in one of the two namespaces, so teardown
kills them by PID (`ip netns pids`) and nothing outlives the run. Needs root
(network namespaces) and `ray[serve]` in the interpreter that runs this.

    sudo build-venv/bin/python tools/bench/serve_bench.py \\
        --model tests/models/transformer/model.onnx \\
        --cases tests/models/transformer --batch-axis 1 \\
        --requests 400 --concurrency 16 [--kill-after 130] [--json out.json]

--cases DIR holds test_data_set_*/ folders (inputs/<name>.npy and
expected/output_<k>.npy, as the committed models and `rivet run
--output-dir` write them); request i sends case i mod n, and every reply is
compared with that case's expected outputs. --kill-after N kills (SIGKILL)
the replica on the second node once N HTTP requests are answered; clients
retry failed requests, so none may be lost. The report (stdout, --json) has
requests/s, p50/p99 latency, the replicas (node, pid) that answered, and how
many replies were wrong or lost.
"""
from __future__ import annotations

import argparse
import concurrent.futures as futures
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HEAD_IP, WORKER_IP = "10.213.0.1", "10.213.0.2"
GCS_PORT, HTTP_PORT = 6379, 8000


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True)


class LoopbackCluster:
    """A Ray head node and a worker node, each in its own network namespace
    (a veth pair between them); stop() kills every process in them."""

    def __init__(self, ray_bin: str, cpus_per_node: int = 2,
                 object_store_bytes: int = 150 * 2**20):
        tag = f"rv{os.getpid()}"
        self.ns = (f"{tag}a", f"{tag}b")
        self.ray_bin = ray_bin
        self.cpus = cpus_per_node
        self.store = object_store_bytes
        self.temp_dir = tempfile.mkdtemp(prefix="rivet-ray-")
        self.procs: list[subprocess.Popen] = []
        self.logs: list[pathlib.Path] = []

    def start(self, timeout: float = 180) -> None:
        a, b = self.ns
        _ip("netns", "add", a)
        _ip("netns", "add", b)
        _ip("link", "add", f"{a}v", "type", "veth", "peer", "name", f"{b}v")
        for ns, dev, addr in ((a, f"{a}v", HEAD_IP), (b, f"{b}v", WORKER_IP)):
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        common = [f"--num-cpus={self.cpus}", f"--object-store-memory={self.store}",
                  "--disable-usage-stats", "--block"]
        self._launch(a, [f"--head", f"--node-ip-address={HEAD_IP}",
                         f"--port={GCS_PORT}", "--include-dashboard=false",
                         f"--temp-dir={self.temp_dir}", *common], timeout)
        self._launch(b, [f"--address={HEAD_IP}:{GCS_PORT}",
                         f"--node-ip-address={WORKER_IP}", *common], timeout)

    def _launch(self, ns: str, args: list, timeout: float) -> None:
        log = pathlib.Path(self.temp_dir) / f"ray-start-{ns}.log"
        self.logs.append(log)
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
        with open(log, "wb") as out:
            self.procs.append(subprocess.Popen(
                ["ip", "netns", "exec", ns, self.ray_bin, "start", *args],
                stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True))
        deadline = time.monotonic() + timeout
        while "Ray runtime started" not in log.read_text(errors="replace"):
            if self.procs[-1].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray start in {ns} failed:\n"
                                   + log.read_text(errors="replace")[-3000:])
            time.sleep(0.5)

    def exec_in_head(self, argv: list, timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", self.ns[0], *argv],
                              timeout=timeout)

    def pids(self) -> list[int]:
        found = []
        for ns in self.ns:
            r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                               text=True)
            found += [int(p) for p in r.stdout.split()]
        return found

    def stop(self) -> int:
        """Kills every process of the cluster by PID (TERM, then KILL), then
        removes the namespaces; returns how many processes were signalled."""
        signalled = set()
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            pids = set(self.pids()) | {p.pid for p in self.procs
                                       if p.poll() is None}
            for pid in pids:
                try:
                    os.kill(pid, sig)
                    signalled.add(pid)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait
            while self.pids() and time.monotonic() < deadline:
                time.sleep(0.2)
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for ns in self.ns:
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", self.temp_dir])
        return len(signalled)


# --- The driver: runs inside the head's namespace ----------------------------

def load_cases(folder: pathlib.Path):
    import numpy as np

    cases = []
    for s in sorted(folder.glob("test_data_set_*")):
        inputs = {p.stem: np.load(p) for p in sorted((s / "inputs").glob("*.npy"))}
        expected = sorted((s / "expected").glob("output_*.npy"),
                          key=lambda p: int(p.stem.split("_")[1]))
        cases.append((inputs, [np.load(p) for p in expected]))
    if not cases:
        raise SystemExit(f"no test_data_set_* in {folder}")
    return cases


def matches(got, want, rtol: float, atol: float) -> bool:
    import numpy as np

    got = np.asarray(got, dtype=want.dtype)
    if got.shape != want.shape:
        return False
    if np.issubdtype(want.dtype, np.floating):
        return bool(np.allclose(got, want, rtol=rtol, atol=atol))
    return bool(np.array_equal(got, want))


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def http_load(cases, args, kill):
    """`args.requests` POSTs from `args.concurrency` threads, each retried
    (up to args.retries times) until answered; kill(answered) may kill a
    replica meanwhile."""
    # Serve runs an HTTP proxy on every node; the clients spread over them as a
    # load balancer in front of a cluster would (each proxy prefers the
    # replica on its own node and falls back to the others).
    urls = [f"http://{ip}:{HTTP_PORT}/" for ip in (HEAD_IP, WORKER_IP)]
    bodies = [json.dumps({"inputs": {n: a.tolist() for n, a in c[0].items()}}
                         ).encode() for c in cases]
    lock = threading.Lock()
    stats = {"answered": 0, "wrong": 0, "lost": 0, "retries": 0,
             "replicas": {}, "latency_s": [], "errors": []}

    def one(i):
        case = i % len(cases)
        start = time.perf_counter()
        for attempt in range(args.retries + 1):
            try:
                req = urllib.request.Request(
                    urls[(i + attempt) % 2], bodies[case], method="POST",
                    headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(
                        req, timeout=args.request_timeout) as r:
                    reply = json.loads(r.read())
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError,
                    json.JSONDecodeError) as e:
                with lock:
                    stats["retries"] += 1
                    if len(stats["errors"]) < 5:
                        stats["errors"].append(f"request {i}: {e}")
                time.sleep(min(2.0, 0.1 * (attempt + 1)))
        else:
            with lock:
                stats["lost"] += 1
            return
        latency = time.perf_counter() - start
        outs = list(reply["outputs"].values())  # in the model's order
        ok = len(outs) == len(cases[case][1]) and all(
            matches(g, w, args.rtol, args.atol)
            for g, w in zip(outs, cases[case][1]))
        rep = reply["replica"]
        with lock:
            stats["answered"] += 1
            stats["wrong"] += 0 if ok else 1
            stats["latency_s"].append(latency)
            key = f"{rep['node_id']}/{rep['pid']}"
            stats["replicas"][key] = stats["replicas"].get(key, 0) + 1
            answered = stats["answered"]
            replicas = list(stats["replicas"])
        kill(answered, replicas)

    start = time.perf_counter()
    with futures.ThreadPoolExecutor(args.concurrency) as pool:
        list(pool.map(one, range(args.requests)))
    return stats, time.perf_counter() - start


def handle_load(handle, cases, args):
    """`args.handle_requests` NumPy requests through the deployment handle,
    all in flight at once (so that Serve batches them)."""
    start = time.perf_counter()
    refs = [(i % len(cases), handle.predict.remote(cases[i % len(cases)][0]))
            for i in range(args.handle_requests)]
    wrong = sum(0 if all(matches(g, w, args.rtol, args.atol)
                         for g, w in zip(ref.result(timeout_s=args.request_timeout),
                                         cases[c][1])) else 1
                for c, ref in refs)
    return {"requests": args.handle_requests, "wrong": wrong,
            "seconds": time.perf_counter() - start}


def driver(args) -> int:
    import logging

    import ray
    from ray import serve

    import rivet.serve

    cases = load_cases(pathlib.Path(args.cases))
    # Serve's router logs every request it re-routes after a replica dies.
    logging.getLogger("ray.serve").setLevel(logging.ERROR)
    ray.init(address=f"{HEAD_IP}:{GCS_PORT}", logging_level="ERROR",
             log_to_driver=False)
    deadline = time.monotonic() + 120
    while len([n for n in ray.nodes() if n["Alive"]]) < 2:
        if time.monotonic() > deadline:
            raise SystemExit("the second Ray node never joined")
        time.sleep(0.5)
    head_node = ray.get_runtime_context().get_node_id()
    serve.start(proxy_location="EveryNode",
                http_options={"host": "0.0.0.0", "port": HTTP_PORT})
    app = rivet.serve.app(args.model, num_replicas=args.replicas,
                          num_threads=args.threads,
                          max_batch_size=args.max_batch_size,
                          batch_axis=args.batch_axis,
                          max_replicas_per_node=1)
    t0 = time.perf_counter()
    handle = serve.run(app, name="rivet", route_prefix="/")
    deploy_s = time.perf_counter() - t0
    killed = {}
    kill_lock = threading.Lock()

    def kill(answered, replicas):
        if not args.kill_after or killed or answered < args.kill_after:
            return
        with kill_lock:
            for key in replicas:
                node, pid = key.split("/")
                if node != head_node and not killed:
                    killed.update(pid=int(pid), node_id=node,
                                  after=answered)
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass

    # Warm-up: every replica loads and runs each case once.
    for c in cases:
        handle.predict.remote(c[0]).result(timeout_s=args.request_timeout)
    stats, seconds = http_load(cases, args, kill)
    hl = handle_load(handle, cases, args) if args.handle_requests else None
    lat = stats.pop("latency_s")
    nodes = {}
    for key, n in stats["replicas"].items():
        node = key.split("/")[0]
        nodes[node] = nodes.get(node, 0) + n
    report = {
        "requests": args.requests, "concurrency": args.concurrency,
        "answered": stats["answered"], "wrong": stats["wrong"],
        "lost": stats["lost"], "retries": stats["retries"],
        "errors": stats["errors"],
        "requests_per_s": stats["answered"] / seconds,
        "p50_ms": percentile(lat, 0.50) * 1e3,
        "p99_ms": percentile(lat, 0.99) * 1e3,
        "replicas": stats["replicas"], "requests_per_node": nodes,
        "head_node": head_node, "killed": killed or None,
        "handle": hl, "deploy_s": deploy_s,
        "replica_count": args.replicas, "threads": args.threads,
        "max_batch_size": args.max_batch_size, "batch_axis": args.batch_axis,
    }
    serve.shutdown()
    ray.shutdown()
    with open(args.report, "w") as f:
        json.dump(report, f, indent=1)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help=".rvx, .onnx or .rvir")
    p.add_argument("--cases", required=True, help="folder of test_data_set_*")
    p.add_argument("--requests", type=int, default=400)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--handle-requests", type=int, default=64)
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--threads", type=int, default=1, help="per replica")
    p.add_argument("--max-batch-size", type=int, default=8)
    p.add_argument("--batch-axis", type=int, default=None)
    p.add_argument("--kill-after", type=int, default=0,
                   help="kill the second node's replica after N answers")
    p.add_argument("--retries", type=int, default=8)
    p.add_argument("--request-timeout", type=float, default=60)
    p.add_argument("--timeout", type=float, default=600, help="whole run")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--json", help="write the report here too")
    p.add_argument("--driver", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--report", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.model = os.path.abspath(args.model)
    args.cases = os.path.abspath(args.cases)
    if args.driver:
        return driver(args)

    if os.geteuid() != 0:
        raise SystemExit("serve_bench.py needs root (network namespaces)")
    ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
    cluster = LoopbackCluster(ray_bin)
    started = time.perf_counter()
    report_path = os.path.join(cluster.temp_dir, "report.json")
    try:
        cluster.start()
        cluster_s = time.perf_counter() - started
        argv = [sys.executable, os.path.abspath(__file__), "--driver",
                "--report", report_path] + sys.argv[1:]
        r = cluster.exec_in_head(argv, timeout=args.timeout)
        if r.returncode != 0:
            raise SystemExit(f"the driver failed (exit {r.returncode})")
        with open(report_path) as f:
            report = json.load(f)
        report["cluster_start_s"] = cluster_s
    finally:
        report_pids = cluster.pids()
        signalled = cluster.stop()
    report["cluster_pids_at_stop"] = len(report_pids)
    report["processes_killed_at_stop"] = signalled
    report["processes_left"] = len([p for p in report_pids
                                    if os.path.exists(f"/proc/{p}")
                                    and _alive(p)])
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    return 0


def _alive(pid: int) -> bool:
    """False for a zombie (exited, waiting for its parent to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
