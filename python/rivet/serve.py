"""Serving a Rivet executable on Ray Serve.

``rivet.serve.app(exe)`` is a Serve application whose replicas each load the
executable once (from its bytes, which travel with the deployment: a replica
on another machine needs no file) and answer

- HTTP: ``POST /`` with ``{"inputs": {"x": [[...]], ...}}`` (or the inputs
  object alone); the reply is ``{"outputs": {"y": [[...]]}, "replica": {...}}``
  (400 with ``{"error": message}`` for bad input);
- Ray's handle API: ``handle.predict.remote({"x": ndarray})`` gives the
  outputs as a list of NumPy arrays.

Both paths go through Serve's dynamic batching (``@serve.batch``): requests
that arrive within ``batch_wait_timeout_s`` of each other run back to back in
one hop off the event loop, and with ``batch_axis`` set, requests whose inputs
differ only along that axis are concatenated and run as one call. That merge
is only right for models whose batch rows are independent, so it is opt-in.

    from ray import serve
    import rivet.serve
    serve.run(rivet.serve.app("model.rvx", num_replicas=2, num_threads=1,
                              max_batch_size=8, batch_axis=0))

Importing this module imports Ray (``pip install "ray[serve]"``);
``import rivet`` does not.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
from ray import serve

import rivet

__all__ = ["RivetModel", "app"]


def _executable_bytes(exe: Union["rivet.Executable", str, os.PathLike, bytes]
                      ) -> bytes:
    if isinstance(exe, (bytes, bytearray, memoryview)):
        return bytes(exe)
    if isinstance(exe, rivet.Executable):
        return bytes(exe.to_bytes())
    path = os.fspath(exe)
    if path.lower().endswith((".onnx", ".rvir")):
        return bytes(rivet.compile(path).to_bytes())
    with open(path, "rb") as f:
        return f.read()


class RivetModel:
    """One replica: an InferenceSession over the executable.

    ``num_threads`` are the replica's intra-op threads (each replica is a
    process of its own, so the process-wide setting is the replica's).
    """

    def __init__(self, executable: bytes, num_threads: int = 1,
                 max_batch_size: int = 8, batch_wait_timeout_s: float = 0.002,
                 batch_axis: Optional[int] = None):
        self.session = rivet.InferenceSession(rivet.load(executable),
                                              num_threads=num_threads)
        self.inputs = {i.name: i for i in self.session.get_inputs()}
        self.output_names = list(self.session.executable.output_names)
        self.batch_axis = batch_axis
        self._run_batch.set_max_batch_size(max_batch_size)
        self._run_batch.set_batch_wait_timeout_s(batch_wait_timeout_s)
        self.replica = {"pid": os.getpid(), "node_id": _node_id()}

    async def predict(self, feeds: Mapping[str, Any]) -> List[np.ndarray]:
        """The outputs of @main for feeds (input name -> array)."""
        result = await self._run_batch(dict(feeds))
        if isinstance(result, BaseException):
            raise result
        return result

    async def __call__(self, request) -> Any:
        from starlette.responses import JSONResponse

        try:
            body = await request.json()
            feeds = self._decode(body)
        except (ValueError, TypeError, KeyError) as e:
            return JSONResponse({"error": f"bad request: {e}"}, 400)
        try:
            outs = await self.predict(feeds)
        except rivet.Error as e:
            return JSONResponse({"error": str(e)}, 400)
        return {"outputs": {n: np.asarray(o).tolist()
                            for n, o in zip(self.output_names, outs)},
                "replica": self.replica}

    def _decode(self, body: Any) -> Dict[str, np.ndarray]:
        """JSON inputs as arrays of the declared dtypes."""
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object")
        inputs = body.get("inputs", body)
        if not isinstance(inputs, dict):
            raise ValueError('"inputs" must map input names to arrays')
        unknown = sorted(set(inputs) - set(self.inputs))
        if unknown:
            raise KeyError(f"unknown input {unknown[0]!r}; the model takes "
                           f"{sorted(self.inputs)}")
        return {n: np.asarray(v, dtype=self.inputs[n].dtype)
                for n, v in inputs.items()}

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.002)
    async def _run_batch(self, batch: List[Dict[str, np.ndarray]]) -> List[Any]:
        # Off the event loop (run releases the GIL), so that the replica keeps
        # accepting requests and answering health checks meanwhile.
        return await asyncio.to_thread(self._run_all, batch)

    def _run_all(self, batch: List[Dict[str, np.ndarray]]) -> List[Any]:
        results: List[Any] = [None] * len(batch)
        for group in self._groups(batch):
            if len(group) > 1:
                merged = self._run_merged([batch[i] for i in group])
                if merged is not None:
                    for i, r in zip(group, merged):
                        results[i] = r
                    continue
            for i in group:
                results[i] = self._run_one(batch[i])
        return results

    def _run_one(self, feeds: Dict[str, np.ndarray]) -> Any:
        try:
            return list(self.session.run(None, feeds))
        except rivet.Error as e:
            return e

    def _groups(self, batch: List[Dict[str, np.ndarray]]) -> List[List[int]]:
        """Indices of the requests that may run as one call: same input
        names, dtypes and shapes but along batch_axis."""
        if self.batch_axis is None:
            return [[i] for i in range(len(batch))]
        groups: Dict[Any, List[int]] = {}
        for i, feeds in enumerate(batch):
            key = self._merge_key(feeds)
            groups.setdefault(key if key is not None else ("single", i),
                              []).append(i)
        return list(groups.values())

    def _merge_key(self, feeds: Dict[str, np.ndarray]):
        key = []
        for name in sorted(feeds):
            a = np.asarray(feeds[name])
            if a.ndim <= self.batch_axis:
                return None
            shape = list(a.shape)
            del shape[self.batch_axis]
            key.append((name, a.dtype.str, tuple(shape)))
        return tuple(key)

    def _run_merged(self, group: List[Dict[str, np.ndarray]]
                    ) -> Optional[List[List[np.ndarray]]]:
        """One call over the concatenated requests, split back; None when the
        outputs do not carry the batch (the caller then runs them one by
        one)."""
        ax = self.batch_axis
        sizes = [np.asarray(next(iter(f.values()))).shape[ax] for f in group]
        feeds = {n: np.concatenate([np.asarray(f[n]) for f in group], axis=ax)
                 for n in group[0]}
        try:
            outs = self.session.run(None, feeds)
        except rivet.Error:
            return None
        total = sum(sizes)
        if any(np.ndim(o) <= ax or np.shape(o)[ax] != total for o in outs):
            return None
        cuts = np.cumsum(sizes)[:-1]
        parts = [np.split(np.asarray(o), cuts, axis=ax) for o in outs]
        return [[np.ascontiguousarray(p[k]) for p in parts]
                for k in range(len(group))]


def _node_id() -> Optional[str]:
    """The Ray node of this process (None outside a Ray worker)."""
    import ray

    return ray.get_runtime_context().get_node_id() if ray.is_initialized() \
        else None


def app(executable: Union["rivet.Executable", str, os.PathLike, bytes], *,
        num_replicas: int = 1, num_threads: int = 1, max_batch_size: int = 8,
        batch_wait_timeout_s: float = 0.002, batch_axis: Optional[int] = None,
        max_replicas_per_node: Optional[int] = None,
        ray_actor_options: Optional[Dict[str, Any]] = None,
        max_ongoing_requests: int = 32,
        name: str = "RivetModel") -> "serve.Application":
    """A Serve application serving ``executable`` (an Executable, the bytes
    or path of a .rvx, or an .onnx/.rvir path compiled here at -O3).

    Each replica asks Ray for ``num_threads`` CPUs unless ray_actor_options
    says otherwise; ``max_replicas_per_node=1`` spreads replicas over nodes.
    """
    options: Dict[str, Any] = {"num_cpus": num_threads}
    options.update(ray_actor_options or {})
    kwargs: Dict[str, Any] = dict(name=name, num_replicas=num_replicas,
                                  ray_actor_options=options,
                                  max_ongoing_requests=max_ongoing_requests)
    if max_replicas_per_node is not None:
        kwargs["max_replicas_per_node"] = max_replicas_per_node
    deployment = serve.deployment(**kwargs)(RivetModel)
    return deployment.bind(_executable_bytes(executable), num_threads,
                           max_batch_size, batch_wait_timeout_s, batch_axis)
