"""Shared helpers of the benchmark scripts: finding the rivet binary, running
`rivet bench` and reading its JSON, an engine kept up in a process of its
own (Worker), describing the machine."""
import contextlib
import json
import os
import platform
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rivet_binary(explicit=None):
    """The rivet CLI: --rivet, $RIVET, or build/tools/rivet."""
    path = explicit or os.environ.get("RIVET") or os.path.join(ROOT, "build", "tools", "rivet")
    if not os.path.exists(path):
        sys.exit(f"error: no rivet binary at {path} (give --rivet PATH)")
    return path


def rivet_bench(rivet, model, args=(), check=True):
    """Runs `rivet bench MODEL ARGS` and returns its JSON object."""
    cmd = [rivet, "bench", model, *args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        if not check:
            return None
        sys.exit(f"error: {' '.join(cmd)} failed:\n{p.stderr}{p.stdout}")
    return json.loads(p.stdout)


def machine_summary():
    """The CPU model, core count and notable SIMD flags (lscpu)."""
    model, flags = platform.processor() or "unknown", ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "Model name":
                model = value.strip()
            if key.strip() == "Flags":
                have = value.split()
                wanted = ["avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "amx_tile"]
                flags = " ".join(f for f in wanted if f in have)
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores visible ({flags or 'no AVX flags seen'})"


def steal_seconds():
    """CPU time the host has taken from this VM's vCPUs since boot, all
    vCPUs summed (/proc/stat's steal column), or None where not reported."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK") if fields[0] == "cpu" and len(fields) > 8 else None
    except (OSError, ValueError):
        return None


def least_squares_slope(xs, ys):
    """The slope and intercept of the least-squares line through (xs, ys)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    return slope, my - slope * mx


class Worker:
    """An engine in a process of its own that times one batch per line it
    reads and answers with a JSON line (its "median_ms"); stderr goes to a
    file, read back when the process fails."""

    def __init__(self, cmd, work, name, env=None):
        self.cmd = cmd
        self.err = open(os.path.join(work, f"{name}.stderr"), "w+")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True,
                                     env=env)

    def request(self, line):
        """Sends one line; returns the JSON answer."""
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        except BrokenPipeError:
            answer = ""
        if not answer:
            self.proc.wait()
            self.err.seek(0)
            raise RuntimeError(f"{shlex.join(self.cmd)} failed ({self.proc.returncode}):\n{self.err.read()}")
        return json.loads(answer)

    def close(self):
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.err.close()
