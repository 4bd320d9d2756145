"""rivet.serve: the replica's batching in-process, and the whole deployment on
a two-node Ray cluster on this machine (tools/bench/serve_bench.py) under
concurrent HTTP clients, with one replica killed mid-run.

The cluster test is marked `serve`: `pytest -m "not serve"` skips it. It
needs root (network namespaces) and ray[serve]; python-test.sh installs Ray
into the test venv (SERVE_TESTS=0 there leaves it out).
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import rivet
from conftest import MODELS, ROOT, assert_matches

serve_mod = pytest.importorskip("rivet.serve", reason="ray[serve] is not installed")

TRANSFORMER = MODELS / "transformer" / "model.onnx"  # src: [S, B, 16]
BRANCH = MODELS / "branch" / "model.onnx"  # If on a sum over the whole batch


def _replica(model, **kw):
    return serve_mod.RivetModel(rivet.compile(model).to_bytes(), **kw)


def _batch(replica, feeds_list):
    """What the replica does with one batch @serve.batch collected (the
    decorator itself needs a running Serve replica: the cluster test)."""
    return replica._run_all(feeds_list)


def _srcs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [{"src": rng.standard_normal(s).astype(np.float32)} for s in shapes]


def test_merged_batches_match_single_runs():
    """Requests of one batch that differ only along the batch axis run as
    one call and are split back; each equals the request run alone."""
    replica = _replica(TRANSFORMER, max_batch_size=8, batch_axis=1)
    calls = []
    run = replica.session.run
    replica.session.run = lambda names, feeds: calls.append(
        feeds["src"].shape) or run(names, feeds)
    shapes = [(5, 1, 16), (5, 2, 16), (3, 1, 16), (5, 3, 16), (3, 2, 16),
              (5, 1, 16)]
    feeds = _srcs(shapes)
    outs = _batch(replica, feeds)
    alone = rivet.InferenceSession(replica.session.executable)
    for f, o in zip(feeds, outs):
        (want,) = alone.run(None, f)
        assert_matches(o[0], want, str(f["src"].shape), rtol=1e-5, atol=1e-5)
    # S = 5 requests (7 rows) ran as one call, S = 3 (3 rows) as another.
    assert sorted(calls) == [(3, 3, 16), (5, 7, 16)], calls


def test_without_batch_axis_requests_run_alone():
    """The default: no merge (branch's output depends on the whole batch)."""
    replica = _replica(BRANCH, max_batch_size=8)
    rng = np.random.default_rng(1)
    feeds = [{"x": rng.standard_normal((n, 4)).astype(np.float32)}
             for n in (3, 3, 2, 3)]
    outs = _batch(replica, feeds)
    alone = rivet.InferenceSession(replica.session.executable)
    for f, o in zip(feeds, outs):
        np.testing.assert_array_equal(o[0], alone.run(None, f)[0])


def test_a_bad_request_fails_alone():
    replica = _replica(TRANSFORMER, max_batch_size=8, batch_axis=1)
    feeds = _srcs([(5, 1, 16), (5, 1, 16)])
    feeds.insert(1, {"src": np.zeros((5, 1, 7), np.float32)})
    outs = _batch(replica, feeds)
    assert isinstance(outs[1], rivet.Error), outs[1]
    assert "src" in str(outs[1])
    assert outs[0][0].shape == (5, 1, 16) and outs[2][0].shape == (5, 1, 16)


def test_http_body_decoding():
    replica = _replica(TRANSFORMER)
    feeds = replica._decode({"inputs": {"src": [[[0.5] * 16]]}})
    assert feeds["src"].dtype == np.float32 and feeds["src"].shape == (1, 1, 16)
    with pytest.raises(KeyError, match="unknown input 'x'"):
        replica._decode({"inputs": {"x": [1.0]}})
    with pytest.raises(ValueError):
        replica._decode([1, 2])


def _can_make_network_namespaces():
    """Root with iproute2, and a kernel that lets this process make a
    network namespace (not every container does)."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        return False
    probe = f"rvprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe],
                          capture_output=True).returncode == 0
    if made:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return made


def _rivet_cli():
    path = os.environ.get("RIVET") or str(ROOT / "build" / "tools" / "rivet")
    return path if os.access(path, os.X_OK) else None


def _cases(tmp_path, exe_path):
    """test_data_set_* folders: the committed inputs and random ones of other
    lengths and batches, with the outputs `rivet run` gives for them (the
    committed expected outputs where the CLI is not built)."""
    cli = _rivet_cli()
    rng = np.random.default_rng(7)
    inputs = [np.load(s / "inputs" / "src.npy")
              for s in sorted((MODELS / "transformer").glob("test_data_set_*"))]
    inputs += [rng.standard_normal(s).astype(np.float32)
               for s in ((4, 1, 16), (4, 3, 16), (9, 2, 16))]
    sess = rivet.InferenceSession(str(exe_path))
    for i, src in enumerate(inputs):
        d = tmp_path / "cases" / f"test_data_set_{i}"
        (d / "inputs").mkdir(parents=True)
        (d / "expected").mkdir()
        np.save(d / "inputs" / "src.npy", src)
        if cli:
            subprocess.run([cli, "run", str(exe_path), "--input",
                            f"src={d / 'inputs' / 'src.npy'}", "--output-dir",
                            str(d / "expected")], check=True,
                           stdout=subprocess.DEVNULL)
        else:
            np.save(d / "expected" / "output_0.npy", sess.run(None, {"src": src})[0])
    return tmp_path / "cases"


@pytest.mark.serve
def test_two_node_cluster_serves_and_survives_a_killed_replica(tmp_path):
    if not _can_make_network_namespaces():
        pytest.skip("needs root, iproute2 and permission to make network "
                    "namespaces")
    exe_path = tmp_path / "transformer.rvx"
    rivet.compile(TRANSFORMER).save(exe_path)
    cases = _cases(tmp_path, exe_path)
    report_path = tmp_path / "report.json"
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "bench" / "serve_bench.py"),
         "--model", str(exe_path), "--cases", str(cases), "--batch-axis", "1",
         "--requests", "400", "--concurrency", "16", "--kill-after", "130",
         "--handle-requests", "64", "--json", str(report_path)],
        timeout=900, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    rep = json.loads(report_path.read_text())
    print(json.dumps({k: rep[k] for k in ("requests_per_s", "p50_ms", "p99_ms",
                                          "retries", "replicas", "killed")}))
    assert rep["answered"] == 400 and rep["lost"] == 0, rep
    assert rep["wrong"] == 0, rep
    assert len(rep["requests_per_node"]) == 2, rep  # both nodes served
    assert rep["killed"] is not None, rep  # the worker's replica was killed
    killed = f"{rep['killed']['node_id']}/{rep['killed']['pid']}"
    assert killed in rep["replicas"], rep
    assert rep["handle"]["wrong"] == 0, rep
    # Every process the cluster started was signalled by PID and is gone.
    assert rep["processes_killed_at_stop"] >= rep["cluster_pids_at_stop"] > 0
    assert rep["processes_left"] == 0, rep
