#!/usr/bin/python3
"""Writes inputs and NumPy-computed expected outputs for tests/programs/*.

Run with Debian's Python (it has numpy):  /usr/bin/python3 tools/gen_program_data.py
Each program's reference below is written independently of Rivet, in NumPy,
next to the name of its directory; read it side by side with program.rvir.
Outputs are flattened like `rivet run` does: tuples depth-first into
output_<i>.npy, a List (here: class L) into output_<i>_<j>.npy.
"""
import math
import os
import shutil
import sys

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "programs")
PROGRAMS = {}


class L(list):
    """A Rivet List value in a reference result."""


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


def f32(a):
    return np.asarray(a, dtype=np.float32)


def i64(v):
    return np.array(v, dtype=np.int64)


def rng(seed):
    return np.random.default_rng(seed)


@program
def factorial():
    x = f32(rng(1).uniform(-1, 1, (2, 3)))
    n = i64(20)
    out = (i64(math.factorial(20)), x * np.float32(120))
    return {"n": n, "x": x}, out


@program
def cast_like_extents():
    x = np.zeros((2, 0, 4), np.float32)
    r = rng(21).uniform(0.5, 2, (2, 3, 4)).astype(np.float64)
    return {"x": x, "r": r}, np.log(r).astype(np.float32)


@program
def rnn_loop():
    r = rng(2)
    xs = f32(r.uniform(-1, 1, (7, 4)))
    h0 = f32(r.uniform(-1, 1, (8,)))
    w = f32(r.uniform(-0.5, 0.5, (4, 8)))
    u = f32(r.uniform(-0.5, 0.5, (8, 8)))
    b = f32(r.uniform(-0.1, 0.1, (8,)))
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h @ u + b).astype(np.float32)
    return {"xs": xs, "h0": h0, "w": w, "u": u, "b": b}, h


@program
def list_fold():
    x = f32(rng(3).uniform(-1, 1, (2, 3)))
    k = 5
    lst = [x * np.float32(i) for i in reversed(range(k))]  # built by Cons at the front
    total = np.zeros((2, 3), np.float32)
    for b in lst:
        total = total * np.float32(0.5) + b
    return {"x": x, "k": i64(k)}, (total, i64(k))


@program
def map_closure():
    r = rng(4)
    x = f32(r.uniform(-1, 1, (3, 2)))
    w = f32(r.uniform(-1, 1, (2,)))
    lst = [x, -x, np.maximum(x, 0)]
    return {"x": x, "w": w}, (x.sum(dtype=np.float32), L([t * w + np.float32(1) for t in lst]))


@program
def data_dependent_if():
    a = f32([0.5, -0.25, 0.75, 0.125])
    b = f32([-0.5, 0.25, -0.75, 0.1])

    def step(x):
        return x * np.float32(2) if x.sum() > 0 else x - np.float32(1)

    x, n = a * np.float32(10), 0
    while not (np.abs(x).max() < 1):
        x, n = x * np.float32(0.5), n + 1
    return {"a": a, "b": b}, (step(a), step(b), (x, i64(n)))


@program
def mutual_recursion():
    n = 1001
    return {"n": i64(n)}, (np.array(n % 2 == 0), np.array(n % 2 == 1), np.array((n + 1) % 2 == 0))


@program
def option_match():
    x = f32([0.1, -0.3, 0.2, 0.9, 0.7])
    first = next((i for i, v in enumerate(x) if v > 0.5), -1)
    none = next((i for i, v in enumerate(x) if v > 100.0), -1)
    return {"x": x}, (i64(first), i64(none))


@program
def tuples():
    r = rng(5)
    a = f32(r.uniform(-1, 1, (2,)))
    b = f32(r.uniform(-1, 1, (3,)))
    return {"a": a, "b": b}, ((b, a), np.float32(b.sum() + a.sum()), a * a)


@program
def split_concat_stack():
    x = f32(np.arange(24).reshape(6, 4) * 0.5 - 3)
    p = np.split(x, 3, axis=0)
    u = np.array_split(x, [1, 4], axis=1)
    return {"x": x}, (np.concatenate([p[2], p[1], p[0]], axis=0), np.stack([p[0], p[2]], axis=1),
                      u[0], u[1], x.T, x.reshape(3, -1), x[1:5:2, 0:4])


@program
def softmax_reduce():
    x = f32(rng(6).uniform(-2, 2, (3, 5)))
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    sm = e / e.sum(axis=-1, keepdims=True)
    return {"x": x}, (sm, x.sum(axis=0), x.mean(axis=1, keepdims=True), x.max(axis=-1),
                      x.argmax(axis=1), x.min(), x.argmin(axis=0))


@program
def nth_length():
    x = f32(rng(7).uniform(-1, 1, (3,)))
    k = 6
    lst = [x + np.float32(i) for i in reversed(range(k))]
    return {"x": x, "k": i64(k)}, (lst[0], lst[2], i64(k))


@program
def growing_accumulator():
    x = f32(rng(8).uniform(-1, 1, (1, 3)))
    n = 5
    acc = x
    for i in range(1, n):
        acc = np.concatenate([acc, x * np.float32(i)], axis=0)
    return {"x": x, "n": i64(n)}, acc


@program
def where_compare():
    r = rng(9)
    a = f32(r.uniform(-1, 1, (2, 3)))
    b = f32(r.uniform(-1, 1, (3,)))
    gt = a > b
    return {"a": a, "b": b}, (np.where(gt, a, b), np.logical_and(gt, a <= np.float32(0.5)),
                              gt.astype(np.int32), np.where(~gt, -a, np.exp(a)),
                              np.minimum(np.maximum(a, b), np.float32(0.25)))


@program
def arange():
    n, x = 7, np.float32(1.6)
    r = np.arange(0, n, 1, dtype=np.int64)
    return {"n": i64(n), "x": np.array(x)}, (r, np.arange(np.float32(0), x, np.float32(0.25), dtype=np.float32),
                                             i64((r * r).sum()))


@program
def batch_matmul():
    r = rng(10)
    a = f32(r.uniform(-1, 1, (2, 1, 3, 4)))
    b = f32(r.uniform(-1, 1, (5, 4, 2)))
    v = f32(r.uniform(-1, 1, (4,)))
    w = f32(r.uniform(-1, 1, (5, 4)))
    return {"a": a, "b": b, "v": v, "w": w}, (np.matmul(a, b), np.matmul(a, v), a @ w.T)


@program
def concat_prelude():
    r = rng(11)
    a, b, c = (f32(r.uniform(-1, 1, (k, 3))) for k in (1, 2, 3))
    return {"a": a, "b": b, "c": c}, np.concatenate([a, b, c], axis=0)


@program
def nested_loops():
    m = f32(rng(12).uniform(-0.5, 0.5, (3, 3)))
    k = 4
    total = np.zeros((3, 3), np.float32)
    for p in range(1, k + 1):
        acc = m
        for _ in range(1, p):
            acc = acc @ m
        total = total + acc
    return {"m": m, "k": i64(k)}, total


@program
def tree_adt():
    x = f32([0.5, -1.5])
    d = 3

    def build(d, x):
        return ("leaf", x) if d == 0 else ("node", build(d - 1, x * np.float32(2)), build(d - 1, x + np.float32(1)))

    def total(t):
        return t[1] if t[0] == "leaf" else total(t[1]) * np.float32(2) - total(t[2])

    return {"x": x, "d": i64(d)}, (total(build(d, x)), i64(2 ** d))


@program
def higher_order():
    r = rng(13)
    x = f32(r.uniform(-1, 1, (3,)))
    c = f32(r.uniform(-0.5, 0.5, (3,)))
    h = np.maximum(x - c, 0)
    return {"x": x, "c": c}, (h, h + h, i64(2))


@program
def tree_lstm():
    r = rng(14)
    x = f32(r.uniform(-1, 1, (1, 32)))
    depth = 6
    wl = f32(r.uniform(-0.3, 0.3, (32, 96)))
    bl = f32(r.uniform(-0.1, 0.1, (96,)))
    u = f32(r.uniform(-0.2, 0.2, (64, 160)))
    bu = f32(r.uniform(-0.1, 0.1, (160,)))

    def sig(v):
        return 1 / (1 + np.exp(-v))

    def build(d, x):
        if d == 0:
            return ("leaf", x)
        return ("node", build(d - 1, x * np.float32(0.9)), build(d - 1, np.tanh(x + np.float32(0.1))))

    def cell(t):
        if t[0] == "leaf":
            i, o, g = np.split(t[1] @ wl + bl, 3, axis=1)
            c = sig(i) * np.tanh(g)
            return sig(o) * np.tanh(c), c
        (hl, cl), (hr, cr) = cell(t[1]), cell(t[2])
        i, fl, fr, o, g = np.split(np.concatenate([hl, hr], axis=1) @ u + bu, 5, axis=1)
        c = sig(i) * np.tanh(g) + (sig(fl) * cl + sig(fr) * cr)
        return sig(o) * np.tanh(c), c

    def leaves(t):
        return [t[1]] if t[0] == "leaf" else leaves(t[1]) + leaves(t[2])

    t = build(depth, x)
    h, c = cell(t)
    total = np.zeros_like(x)
    for v in reversed(leaves(t)):
        total = v + total
    inputs = {"x": x, "depth": i64(depth), "wl": wl, "bl": bl, "u": u, "bu": bu}
    return inputs, (f32(h), f32(c), f32(total))


def flatten(value, out, index):
    """Mirrors rivet run: returns the next output index."""
    if isinstance(value, L):
        for j, t in enumerate(value):
            out[f"output_{index}_{j}"] = np.asarray(t)
        return index + 1
    if isinstance(value, tuple):
        for v in value:
            index = flatten(v, out, index)
        return index
    out[f"output_{index}"] = np.asarray(value)
    return index + 1


def main():
    names = sys.argv[1:] or sorted(PROGRAMS)
    for name in names:
        inputs, result = PROGRAMS[name]()
        d = os.path.join(ROOT, name)
        if not os.path.exists(os.path.join(d, "program.rvir")):
            sys.exit(f"{d}/program.rvir is missing")
        for sub in ("inputs", "expected"):
            shutil.rmtree(os.path.join(d, sub), ignore_errors=True)
            os.makedirs(os.path.join(d, sub))
        for k, v in inputs.items():
            np.save(os.path.join(d, "inputs", k + ".npy"), np.asarray(v))
        out = {}
        flatten(result, out, 0)
        for k, v in out.items():
            np.save(os.path.join(d, "expected", k + ".npy"), v)
        print(f"{name}: {len(inputs)} inputs, {len(out)} outputs")


if __name__ == "__main__":
    main()
