"""``minilm-int8``: the bundled model with its matrix products run in int8, for faster ingest.

The bundled file keeps its weights as int8 but computes in float32: each weight is cast and
scaled back before its MatMul. Quantized dynamically (onnxruntime's quantizer: weights int8 per
output channel, activations uint8 with one scale per call), the attention and first
feed-forward products run on the CPU's int8 instructions. The feed-forward output products
(1,536 -> 384) stay float32: their inputs, after GELU, carry outliers that one scale a call holds
badly (all products in int8: pooled cosine to the float model .994 on the dev chunks, these kept:
.997). The seed corpus ingests in 0.75 of the time; retrieval and answers are measured in
docs/evals/embed-speed.md. Its vectors are not the bundled model's, so it is an embedder of its
own (an index records it and refuses the other).

The quantized file is made once from the bundled one (seconds) and kept in a cache folder
(``embedder.cache_dir``; the loader's default is the user's cache folder), named by the bundled
file's hash, this recipe's version and onnxruntime's version. The model id names the recipe, not
onnxruntime's version: another onnxruntime makes its own file, whose vectors may differ from the
first's as its float kernels' may (an index is not refused for it; re-ingest after an upgrade
for vectors made the same way as the questions').
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

import onnx
import onnxruntime as ort

from truthbase.embed._base import EmbeddingError
from truthbase.embed._graph import loadable_model

#: Bumped when the recipe below changes what it writes.
RECIPE_VERSION = 1


def _shrinking_products(model: onnx.ModelProto) -> list[str]:
    """The MatMul nodes whose constant weight narrows the width (more rows than columns): a
    BERT layer's feed-forward output product."""
    shapes = {init.name: list(init.dims) for init in model.graph.initializer}
    names = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        dims = next((shapes[name] for name in node.input if name in shapes), None)
        if dims is not None and len(dims) == 2 and dims[0] > dims[1]:
            names.append(node.name)
    return names


def _quiet_advice(record: logging.LogRecord) -> bool:
    """Drop the quantizer's pre-processing advice, and nothing else the root logger gets."""
    return not record.getMessage().startswith("Please consider to run pre-processing")


def quantize(source: Path, target: Path) -> None:
    """Write ``source`` (a BERT-style ONNX encoder) to ``target`` with its products in int8."""
    # Imported here: the quantizer pulls in more of onnxruntime's Python tools than a search needs.
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Working files beside the target: a full or read-only temporary folder is not the cache's.
    with tempfile.TemporaryDirectory(prefix=".working-", dir=target.parent) as folder:
        folded = Path(folder) / "folded.onnx"
        # onnxruntime's basic graph optimizations fold each weight's cast and scale into a float
        # initializer, which is what the quantizer recognizes as a constant weight.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        with loadable_model(source) as loadable:
            ort.InferenceSession(str(loadable), options, providers=["CPUExecutionProvider"])
        keep_float = _shrinking_products(onnx.load(str(folded)))
        # The quantizer logs a root-logger warning that advises pre-processing (shape inference
        # for image models) on every call: nothing for a user to act on.
        root = logging.getLogger()
        root.addFilter(_quiet_advice)
        try:
            quantize_dynamic(
                folded,
                target,
                weight_type=QuantType.QInt8,
                per_channel=True,
                nodes_to_exclude=keep_float,
            )
        finally:
            root.removeFilter(_quiet_advice)


#: A making folder older than this was left by a process that died (making takes seconds).
STALE_MAKING_S = 3600.0


def _remove_stale_makings(folder: Path) -> None:
    now = time.time()
    for making in folder.glob(".making-*"):
        try:
            if now - making.stat().st_mtime > STALE_MAKING_S:
                shutil.rmtree(making, ignore_errors=True)
        except OSError:
            continue  # gone already: another process cleaned it


def quantized_model(source: Path, source_sha256: str, folder: Path) -> Path:
    """The int8 copy of ``source``, made on first use and kept in ``folder``."""
    name = f"{source_sha256[:16]}-int8-v{RECIPE_VERSION}-ort{ort.__version__}.onnx"
    target = folder / name
    try:
        if target.is_file():
            return target
        folder.mkdir(parents=True, exist_ok=True)
        _remove_stale_makings(folder)
        # Made beside its final name and renamed: no process reads half a file.
        with tempfile.TemporaryDirectory(prefix=".making-", dir=folder) as making:
            made = Path(making) / name
            quantize(source, made)
            os.replace(made, target)
        return target
    except OSError as exc:
        raise EmbeddingError(
            f"cannot keep the int8 copy of the embedding model in {folder}: {exc}; set "
            "TRUTHBASE_EMBEDDER__CACHE_DIR (or XDG_CACHE_HOME) to a folder that can be written, "
            "or use TRUTHBASE_EMBEDDER__NAME=minilm"
        ) from exc
    except Exception as exc:  # onnx and onnxruntime raise their own, untyped exceptions
        raise EmbeddingError(f"cannot make the int8 copy of {source}: {exc}") from exc
