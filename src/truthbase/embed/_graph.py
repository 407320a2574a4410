"""Exact edits of an ONNX encoder's graph before onnxruntime loads it.

PyTorch's exporter guards each attention softmax with ``Where(IsNaN(p), 0, p)``, for a row of
scores that are all masked with -inf (NaN probabilities, made 0 by the guard). The bundled model
masks with float32's lowest finite value, so no row of it ever gives NaN, and any encoder fed
by our embedder has a visible key in every row (the mask hides padding only, and BERT-style
tokenizers keep [CLS] and [SEP] even for an empty text). The guard then never changes a value,
yet it reads and writes every attention probability twice more: the bundled model's 12 guard
nodes took 17% of its time on batches of 16 x 256 tokens, and the seed corpus ingests in 0.94 of
the time without them, with bit-identical vectors (docs/evals/embed-speed.md;
tests/integration/test_embed_onnx.py). The edit is an optimization only: whatever stops it
(a graph it does not understand, no room for the copy) leaves the file as it is.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper


def _is_zero_scalar(name: str, graph: onnx.GraphProto) -> bool:
    """Whether ``name`` is an initializer or a Constant node holding a 0 of no dimensions (one
    of shape [1, 1, 1] would broadcast the guard's output to more dimensions than its input)."""
    for initializer in graph.initializer:
        if initializer.name == name:
            value = numpy_helper.to_array(initializer)
            return bool(value.ndim == 0 and float(value) == 0.0)
    for node in graph.node:
        if node.op_type == "Constant" and list(node.output) == [name]:
            for attribute in node.attribute:
                if attribute.name == "value":
                    value = np.asarray(numpy_helper.to_array(attribute.t))
                    return bool(value.ndim == 0 and float(value) == 0.0)
    return False


def drop_nan_guards(model: onnx.ModelProto) -> int:
    """Remove every ``Where(IsNaN(x), 0, x)`` of the main graph (in place), its consumers
    reading ``x`` instead; how many guards were removed. A guard whose output or IsNaN is a
    graph output, or whose IsNaN is read elsewhere, is kept; a graph with subgraphs (If, Loop,
    Scan bodies, which may read any name) is left whole."""
    graph = model.graph
    if any(
        attribute.g.node or attribute.graphs for node in graph.node for attribute in node.attribute
    ):
        return 0
    producer = {output: node for node in graph.node for output in node.output}
    readers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    graph_outputs = {output.name for output in graph.output}
    dropped: list[onnx.NodeProto] = []
    renamed: dict[str, str] = {}
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3:
            continue
        condition, then_value, else_value = node.input
        check = producer.get(condition)
        if (
            check is None
            or check.op_type != "IsNaN"
            or list(check.input) != [else_value]
            or readers.get(condition, 0) != 1
            or node.output[0] in graph_outputs
            or condition in graph_outputs
            or not _is_zero_scalar(then_value, graph)
        ):
            continue
        dropped += [node, check]
        renamed[node.output[0]] = else_value
    for node in dropped:
        graph.node.remove(node)
    for node in graph.node:
        for i, name in enumerate(node.input):
            while name in renamed:  # a guard of a guard: to the value the first one guarded
                name = renamed[name]
            node.input[i] = name
    return len(dropped) // 2


def _save_without_nan_guards(path: Path, target: Path) -> bool:
    """Write the model at ``path`` to ``target`` without its NaN guards; False (nothing
    written) when it has none, or keeps its weights in external files a copy would not carry.
    The parsed graph is freed when this returns, before onnxruntime parses the copy."""
    model = onnx.load(str(path), load_external_data=False)
    if any(
        initializer.data_location == onnx.TensorProto.EXTERNAL
        for initializer in model.graph.initializer
    ):
        return False
    if drop_nan_guards(model) == 0:
        return False
    onnx.save(model, str(target))
    return True


@contextlib.contextmanager
def loadable_model(path: Path) -> Iterator[Path]:
    """The file onnxruntime should load for the model at ``path``: a temporary copy without
    its NaN guards (removed when the block ends: a session keeps what it read), or ``path``
    itself when there is nothing to remove or the copy cannot be made. A file, not bytes: a
    session loaded from bytes left its process 22 MiB larger (peak 329 MiB against 307 for the
    bundled model, the heap trimmed; one process each)."""
    try:
        folder = tempfile.TemporaryDirectory(prefix="truthbase-model-")
    except OSError:
        yield path
        return
    with folder:
        copy = Path(folder.name) / path.name
        try:
            edited = _save_without_nan_guards(path, copy)
        except Exception:  # onnx raises its own, untyped errors: the file is loaded as it is
            edited = False
        yield copy if edited else path
