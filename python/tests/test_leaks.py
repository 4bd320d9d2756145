"""A 10^5-call loop keeps the resident set flat; per-call overhead printed."""
import os
import time

import numpy as np

import rivet


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_100k_calls_rss_flat(tiny_session):
    x = np.ones(4, np.float32)
    feeds = {"x": x}
    for _ in range(2000):  # warm up pools and caches
        tiny_session.run(None, feeds)
    before = rss_bytes()
    for _ in range(100_000):
        (y,) = tiny_session.run(None, feeds)
    for _ in range(20_000):
        tiny_session.invoke("main", x).numpy()
    after = rss_bytes()
    growth = after - before
    print(f"\nRSS before {before / 2**20:.1f} MiB, after {after / 2**20:.1f} "
          f"MiB, growth {growth / 1024:.0f} KiB over 120k calls")
    assert growth < 4 * 2**20, growth  # < 40 bytes per call


def test_per_call_overhead(tiny_session):
    x = np.ones(4, np.float32)
    feeds = {"x": x}
    run = tiny_session.run
    for _ in range(1000):
        run(None, feeds)
    best = float("inf")
    for _ in range(5):
        n = 20_000
        t0 = time.perf_counter()
        for _ in range(n):
            run(None, feeds)
        best = min(best, (time.perf_counter() - t0) / n)
    print(f"\nsess.run on a 4-element Add: {best * 1e6:.2f} us per call")
