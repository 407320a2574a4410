-- TruthBase PostgreSQL migration 4 -> 5 (only adds): each chunk's token vectors (the embedder's
-- per-token hidden states) reduced to their signs, for late interaction (truthbase.retrieve.late):
-- n_tokens rows of ceil(dim / 8) bytes, as np.packbits(matrix > 0, axis=1) packs them. Chunks
-- written before this migration have no row; the store hands the blobs back by chunk id.
CREATE TABLE truthbase.chunk_tokens (
    chunk_id bigint PRIMARY KEY REFERENCES truthbase.chunks(id) ON DELETE CASCADE,
    signs    bytea NOT NULL
);
-- Sign bits are close to random: compressing them buys nothing and costs every write a try.
ALTER TABLE truthbase.chunk_tokens ALTER COLUMN signs SET STORAGE EXTERNAL;
