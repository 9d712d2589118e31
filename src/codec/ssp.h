/*
 * ssp.h — pure-C codec for the Syncular SSP2 wire protocol and SSG2 segments.
 *
 * This is the one public header of src/codec/.  It has no PostgreSQL
 * dependency; the extension routes allocation through ssp_set_allocator().
 * The contract is shared/reference/wire-format.md ("WF" below), sections 1-5.
 *
 * Conventions
 *  - Every decode failure sets SspError.code to SSP_ERR_INVALID_REQUEST
 *    ("sync.invalid_request"), except a PUSH_COMMIT with zero operations
 *    which gives SSP_ERR_EMPTY_COMMIT.  Allocation failure gives
 *    SSP_ERR_INTERNAL.  SspError.message is a short human text.
 *  - Functions returning bool return true on success; on false the SspError
 *    (if non-NULL) is filled.
 *  - Strings are (ptr, len) pairs; len in bytes is authoritative (UTF-8 may
 *    contain U+0000).  Decoded strings are NUL-terminated copies.
 *  - Decoded data lives in an SspArena owned by the result object; free it
 *    with ssp_message_free / ssp_segment_free / ssp_arena_free.
 *  - Encoders read caller-owned memory and never keep pointers to it.
 */
#ifndef SSP_H
#define SSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

#define SSP_ERR_INVALID_REQUEST "sync.invalid_request"
#define SSP_ERR_EMPTY_COMMIT    "sync.empty_commit"
#define SSP_ERR_INTERNAL        "sync.internal_error"   /* out of memory, misuse */

typedef struct SspError
{
	const char *code;           /* catalog code string (static storage) */
	char        message[200];   /* NUL-terminated human text */
} SspError;

/* ------------------------------------------------------------------ */
/* Allocation                                                          */
/* ------------------------------------------------------------------ */

typedef void *(*SspMallocFn) (size_t size);
typedef void *(*SspReallocFn) (void *ptr, size_t size);
typedef void  (*SspFreeFn) (void *ptr);

/*
 * Route every allocation of the codec through these hooks (process-wide).
 * Pass NULLs to restore malloc/realloc/free.  Hooks may return NULL (the
 * codec then fails with SSP_ERR_INTERNAL) or not return at all (palloc).
 */
void  ssp_set_allocator(SspMallocFn m, SspReallocFn r, SspFreeFn f);
void *ssp_malloc(size_t size);
void *ssp_realloc(void *ptr, size_t size);
void  ssp_free(void *ptr);

/* Bump arena used for all decoded data; chunks come from the hooks above. */
typedef struct SspArena SspArena;

SspArena *ssp_arena_new(void);                       /* NULL on OOM */
void     *ssp_arena_alloc(SspArena *a, size_t size); /* 8-aligned, zeroed; NULL on OOM */
void      ssp_arena_free(SspArena *a);               /* NULL is a no-op */

/* ------------------------------------------------------------------ */
/* Byte strings and growable output buffer                             */
/* ------------------------------------------------------------------ */

typedef struct SspStr
{
	const char *ptr;            /* NUL-terminated when produced by a decoder */
	uint32_t    len;            /* byte length, authoritative */
} SspStr;

typedef struct SspBytes
{
	const uint8_t *ptr;
	uint32_t       len;
} SspBytes;

/* Growable byte buffer.  Zero-initialise (or ssp_buf_init) before use. */
typedef struct SspBuf
{
	uint8_t *data;
	size_t   len;
	size_t   cap;
	bool     oom;               /* sticky: an append failed */
} SspBuf;

void ssp_buf_init(SspBuf *b);
void ssp_buf_free(SspBuf *b);                        /* releases data, re-inits */
void ssp_buf_reset(SspBuf *b);                       /* len = 0, keeps capacity */
bool ssp_buf_append(SspBuf *b, const void *p, size_t n);

/* Little-endian primitive writers (WF §1).  All return false on OOM;
 * ssp_put_i64 also refuses magnitudes > 2^53-1. */
bool ssp_put_u8(SspBuf *b, uint8_t v);
bool ssp_put_u16(SspBuf *b, uint16_t v);
bool ssp_put_u32(SspBuf *b, uint32_t v);
bool ssp_put_i32(SspBuf *b, int32_t v);
bool ssp_put_i64(SspBuf *b, int64_t v);
bool ssp_put_f64(SspBuf *b, double v);
bool ssp_put_bool(SspBuf *b, bool v);
bool ssp_put_str(SspBuf *b, const char *p, uint32_t len);   /* u32 len + bytes */
bool ssp_put_bytes(SspBuf *b, const uint8_t *p, uint32_t len);

#define SSP_I64_SAFE_MAX INT64_C(9007199254740991)   /* 2^53 - 1 */

/* ------------------------------------------------------------------ */
/* Text helpers                                                        */
/* ------------------------------------------------------------------ */

/* Strict UTF-8 (WF §1 `str`): no overlongs, surrogates, > U+10FFFF, or
 * truncated sequences.  U+0000 is allowed. */
bool ssp_utf8_valid(const char *s, size_t len);

/*
 * Compare two valid UTF-8 strings in UTF-16 code-unit order (WF §1 map
 * keys).  Returns <0, 0, >0.  A prefix sorts first.
 */
int  ssp_utf16_cmp(const char *a, size_t alen, const char *b, size_t blen);

/*
 * JSON syntax check with JS JSON.parse parity (WF §1 `json`, §8 item 2):
 * one value, top-level scalars allowed, whitespace SP/TAB/LF/CR only, no
 * BOM, lone \uD800 escapes and duplicate keys accepted.  Input must also be
 * valid UTF-8.  Nesting deeper than SSP_JSON_MAX_DEPTH is rejected.
 * Non-recursive.
 */
#define SSP_JSON_MAX_DEPTH 512
bool ssp_json_valid(const char *s, size_t len);

/* Parsed JSON value (DOM), allocated in an arena.  Strings are decoded
 * (escapes resolved; lone surrogates kept as WTF-8 3-byte sequences). */
typedef enum SspJsonKind
{
	SSP_JSON_NULL = 0,
	SSP_JSON_FALSE,
	SSP_JSON_TRUE,
	SSP_JSON_NUMBER,
	SSP_JSON_STRING,
	SSP_JSON_ARRAY,
	SSP_JSON_OBJECT
} SspJsonKind;

typedef struct SspJson SspJson;
struct SspJson
{
	SspJsonKind kind;
	double      num;            /* NUMBER: value as JS would read it */
	SspStr      text;           /* STRING: decoded; NUMBER: raw lexeme */
	uint32_t    count;          /* ARRAY/OBJECT: member count */
	SspStr     *keys;           /* OBJECT: decoded keys, wire order (dups kept) */
	SspJson    *items;          /* ARRAY/OBJECT: values */
};

/* Parse (after ssp_json_valid-equivalent checks) into *out.  Errors:
 * SSP_ERR_INVALID_REQUEST on bad JSON, SSP_ERR_INTERNAL on OOM. */
bool ssp_json_parse(SspArena *a, const char *s, size_t len, SspJson **out,
					SspError *err);

/* Standard base64 with padding (render only). */
bool ssp_base64_encode(SspBuf *out, const uint8_t *p, size_t len);

/* ------------------------------------------------------------------ */
/* Columns and values (WF §4.1-4.5)                                    */
/* ------------------------------------------------------------------ */

enum
{
	SSP_COL_STRING = 1,
	SSP_COL_INTEGER = 2,
	SSP_COL_FLOAT = 3,
	SSP_COL_BOOLEAN = 4,
	SSP_COL_JSON = 5,
	SSP_COL_BYTES = 6,
	SSP_COL_BLOB_REF = 7,
	SSP_COL_CRDT = 8
};

typedef struct SspColumn
{
	const char *name;
	uint8_t     type;           /* SSP_COL_* tag 1..8 */
	bool        nullable;
	uint32_t    name_len;       /* 0 = strlen(name); decoders always set it */
} SspColumn;

/* One column value.  `present` is only meaningful for sparse rows (full-row
 * decode sets it true for every column). */
typedef struct SspValue
{
	bool present;
	bool is_null;
	union
	{
		SspStr   str;           /* string, json (raw text), blob_ref (raw text) */
		int64_t  i;             /* integer, |i| <= 2^53-1 */
		double   f;             /* float, any bit pattern */
		bool     b;             /* boolean */
		SspBytes bytes;         /* bytes, crdt */
	};                          /* anonymous (C11 / gnu99) */
} SspValue;

/* Type name as rendered ("string", "integer", ..., "crdt"); NULL if bad tag. */
const char *ssp_column_type_name(uint8_t type);

/*
 * Full-row decode (WF §4.2): null bitmap of ceil(ncols/8) bytes, then every
 * non-NULL value.  out[0..ncols) is filled (present = true).  Strings/bytes
 * are copied into `arena`; with arena == NULL the row is only validated and
 * out may be NULL.  Errors (SSP_ERR_INVALID_REQUEST): padding bit, null on a
 * non-nullable column, value violation (UTF-8, i64 range, bool byte, JSON,
 * blob_ref shape), truncation, trailing bytes.
 */
bool ssp_row_decode_full(SspArena *arena, const SspColumn *cols, uint32_t ncols,
						 const uint8_t *data, size_t len, SspValue *out,
						 SspError *err);

/*
 * Sparse-row decode (WF §4.3, the wire-3 push payload): presence bitmap,
 * null bitmap over present columns, then non-null present values.
 * pk_index names the primary-key column.  Checks in the WF order: presence
 * padding, absent PK, null padding (null for an absent column), null on a
 * non-nullable column, then values and exact consumption.  out[i].present
 * tells presence.  arena NULL = validate only.
 */
bool ssp_row_decode_sparse(SspArena *arena, const SspColumn *cols,
						   uint32_t ncols, uint32_t pk_index,
						   const uint8_t *data, size_t len, SspValue *out,
						   SspError *err);

/*
 * Full-row encode (WF §4.2), appended to out.  Values must be valid: NULL
 * only on nullable columns, strings valid UTF-8, json/blob_ref valid, i64 in
 * the safe range.  `present` is ignored.  Errors: SSP_ERR_INVALID_REQUEST for
 * an invalid value, SSP_ERR_INTERNAL on OOM.
 */
bool ssp_row_encode_full(const SspColumn *cols, uint32_t ncols,
						 const SspValue *vals, SspBuf *out, SspError *err);

/* Sparse-row encode (WF §4.3); vals[i].present selects columns.  The PK
 * must be present.  Same value rules as ssp_row_encode_full. */
bool ssp_row_encode_sparse(const SspColumn *cols, uint32_t ncols,
						   uint32_t pk_index, const SspValue *vals,
						   SspBuf *out, SspError *err);

/*
 * Append the rowId string form of a PK value (WF §4.5): strings as-is,
 * integers decimal, booleans true/false, json raw text.  Errors for NULL,
 * absent or an ineligible type (float, bytes, blob_ref, crdt).
 */
bool ssp_render_pk(const SspColumn *col, const SspValue *val, SspBuf *out,
				   SspError *err);

/* Check a blob_ref text (WF §4.1 tag 7). */
bool ssp_blob_ref_valid(const char *s, size_t len);

/* ------------------------------------------------------------------ */
/* Frames (WF §2.3, §3)                                                */
/* ------------------------------------------------------------------ */

#define SSP_WIRE_MIN 1
#define SSP_WIRE_MAX 3

enum
{
	SSP_KIND_REQUEST = 1,
	SSP_KIND_RESPONSE = 2
};

enum
{
	SSP_FRAME_END = 0x00,
	SSP_FRAME_REQ_HEADER = 0x01,
	SSP_FRAME_PUSH_COMMIT = 0x02,
	SSP_FRAME_PULL_HEADER = 0x03,
	SSP_FRAME_SUBSCRIPTION = 0x04,
	SSP_FRAME_RESP_HEADER = 0x10,
	SSP_FRAME_PUSH_RESULT = 0x11,
	SSP_FRAME_SUB_START = 0x12,
	SSP_FRAME_COMMIT = 0x13,
	SSP_FRAME_SEGMENT_REF = 0x14,
	SSP_FRAME_SEGMENT_INLINE = 0x15,
	SSP_FRAME_SUB_END = 0x16,
	SSP_FRAME_LEASE = 0x19,
	SSP_FRAME_PUSH_RESULT_DETAILS = 0x1B,
	SSP_FRAME_ERROR = 0x1F
};

/* Enum values on the wire. */
enum { SSP_OP_UPSERT = 1, SSP_OP_DELETE = 2 };
enum { SSP_PUSH_APPLIED = 1, SSP_PUSH_CACHED = 2, SSP_PUSH_REJECTED = 3 };
enum { SSP_RESULT_APPLIED = 1, SSP_RESULT_CONFLICT = 2, SSP_RESULT_ERROR = 3 };
enum { SSP_SUB_ACTIVE = 1, SSP_SUB_REVOKED = 2, SSP_SUB_RESET = 3 };
enum { SSP_MEDIA_ROWS = 1, SSP_MEDIA_SQLITE = 2 };
enum
{
	SSP_ACCEPT_INLINE_ROWS = 0x01,
	SSP_ACCEPT_EXTERNAL_ROWS = 0x02,
	SSP_ACCEPT_SQLITE = 0x04,
	SSP_ACCEPT_SIGNED_URLS = 0x08
};

/* map str -> list(str) (scopes, effectiveScopes); keys strictly ascending
 * in UTF-16 order after decode; encoders sort (and reject duplicates). */
typedef struct SspScopeEntry
{
	SspStr   key;
	uint32_t nvalues;
	SspStr  *values;            /* list order kept as-is */
} SspScopeEntry;

typedef struct SspScopeMap
{
	uint32_t       n;
	SspScopeEntry *entries;
} SspScopeMap;

/* map str -> str (stored scopes on a COMMIT change). */
typedef struct SspStrPair
{
	SspStr key;
	SspStr value;
} SspStrPair;

typedef struct SspStrMap
{
	uint32_t    n;
	SspStrPair *entries;
} SspStrMap;

typedef struct SspReqHeader
{
	SspStr  client_id;          /* non-empty */
	int32_t schema_version;     /* >= 1 */
	bool    has_log_epoch;      /* wire >= 2 only */
	SspStr  log_epoch;          /* non-empty when present */
} SspReqHeader;

typedef struct SspPushOp
{
	SspStr   table;
	SspStr   row_id;
	uint8_t  op;                /* SSP_OP_* */
	bool     has_base_version;
	int64_t  base_version;
	bool     has_payload;       /* iff op == upsert */
	SspBytes payload;           /* full row (wire 1/2) or sparse row (wire 3) */
} SspPushOp;

typedef struct SspPushCommit
{
	SspStr     client_commit_id; /* non-empty */
	uint32_t   nops;            /* >= 1, else sync.empty_commit */
	SspPushOp *ops;
} SspPushCommit;

typedef struct SspPullHeader
{
	int32_t limit_commits;
	int32_t limit_snapshot_rows;
	int32_t max_snapshot_pages;
	uint8_t accept;             /* SSP_ACCEPT_* bits; bits 4-7 are an error */
} SspPullHeader;

typedef struct SspSubscription
{
	SspStr      id;
	SspStr      table;
	SspScopeMap scopes;
	bool        has_params;
	SspStr      params;         /* raw JSON text */
	int64_t     cursor;         /* -1 = never synced */
	bool        has_bootstrap_state;
	SspStr      bootstrap_state; /* raw JSON text */
} SspSubscription;

typedef struct SspRespHeader
{
	bool    has_required_schema_version;
	int32_t required_schema_version;
	bool    has_latest_schema_version;
	int32_t latest_schema_version;
	SspStr  log_epoch;          /* wire >= 2: non-empty; wire 1: must be empty */
	bool    reset_required;     /* wire >= 2 only */
} SspRespHeader;

typedef struct SspLease
{
	SspStr  lease_id;           /* non-empty */
	int64_t expires_at_ms;
} SspLease;

typedef struct SspOpResult
{
	int32_t  op_index;
	uint8_t  status;            /* SSP_RESULT_* */
	/* conflict and error: */
	SspStr   code;
	SspStr   message;
	/* conflict: */
	int64_t  server_version;
	SspBytes server_row;        /* full row */
	SspBytes conflict_columns;  /* wire 3 only; bitmap over all columns */
	/* error: */
	bool     retryable;
} SspOpResult;

typedef struct SspPushResult
{
	SspStr       client_commit_id;
	uint8_t      status;        /* SSP_PUSH_* */
	bool         has_commit_seq; /* iff applied or cached */
	int64_t      commit_seq;
	uint32_t     nresults;
	SspOpResult *results;
} SspPushResult;

typedef struct SspDetailsEntry
{
	int32_t op_index;           /* >= 0, unique, names an error record */
	SspStr  details_json;       /* JSON object per WF §3.4 */
} SspDetailsEntry;

typedef struct SspPushResultDetails
{
	SspStr           client_commit_id; /* non-empty */
	uint32_t         nentries;  /* >= 1 */
	SspDetailsEntry *entries;
} SspPushResultDetails;

typedef struct SspSubStart
{
	SspStr      id;
	uint8_t     status;         /* SSP_SUB_* */
	SspStr      reason_code;
	SspScopeMap effective_scopes;
	bool        bootstrap;
} SspSubStart;

typedef struct SspChange
{
	uint16_t table_index;       /* < commit.ntables */
	SspStr   row_id;
	uint8_t  op;                /* SSP_OP_* */
	bool     has_row_version;   /* iff upsert */
	int64_t  row_version;
	SspStrMap scopes;
	bool     has_row;           /* iff upsert */
	SspBytes row;               /* full row, all wire versions */
} SspChange;

typedef struct SspCommit
{
	int64_t    commit_seq;
	int64_t    created_at_ms;
	SspStr     actor_id;
	uint32_t   ntables;
	SspStr    *tables;
	uint32_t   nchanges;
	SspChange *changes;
} SspCommit;

typedef struct SspSegmentRef
{
	SspStr  segment_id;
	uint8_t media_type;         /* SSP_MEDIA_* */
	SspStr  table;
	int64_t byte_length;
	int64_t row_count;
	int64_t as_of_commit_seq;
	SspStr  scope_digest;
	bool    has_row_cursor;
	SspStr  row_cursor;
	bool    has_next_row_cursor;
	SspStr  next_row_cursor;
	bool    has_url;
	SspStr  url;
	bool    has_url_expires_at_ms; /* iff has_url */
	int64_t url_expires_at_ms;
} SspSegmentRef;

typedef struct SspSegmentInline
{
	SspBytes payload;           /* a complete SSG2 rows segment */
} SspSegmentInline;

typedef struct SspSubEnd
{
	int64_t next_cursor;
	bool    has_bootstrap_state;
	SspStr  bootstrap_state;    /* raw JSON text */
} SspSubEnd;

typedef struct SspErrorFrame
{
	SspStr code;
	SspStr message;
	SspStr category;
	bool   retryable;
	SspStr recommended_action;
	bool   has_details;
	SspStr details;             /* raw JSON text */
} SspErrorFrame;

typedef struct SspUnknownFrame
{
	SspBytes payload;
} SspUnknownFrame;

/*
 * One frame.  `type` is the wire frame type.  `unknown` marks a frame kept
 * by type/length only (payload in unknown_frame); the decoder sets it for
 * types not registered in the message kind, and writers refuse an unknown
 * frame whose type is registered (WF §2.2 rule 6).
 */
typedef struct SspFrame
{
	uint8_t type;
	bool    unknown;
	union
	{
		SspReqHeader         req_header;
		SspPushCommit        push_commit;
		SspPullHeader        pull_header;
		SspSubscription      subscription;
		SspRespHeader        resp_header;
		SspLease             lease;
		SspPushResult        push_result;
		SspPushResultDetails push_result_details;
		SspSubStart          sub_start;
		SspCommit            commit;
		SspSegmentRef        segment_ref;
		SspSegmentInline     segment_inline;
		SspSubEnd            sub_end;
		SspErrorFrame        error;
		SspUnknownFrame      unknown_frame;
	};                          /* anonymous (C11 / gnu99) */
} SspFrame;

/* A whole message; END is implied, not stored. */
typedef struct SspMessage
{
	uint16_t  wire_version;     /* 1..3 */
	uint8_t   kind;             /* SSP_KIND_* */
	SspFrame *frames;
	uint32_t  nframes;
	SspArena *arena;            /* owns decoded data; NULL for caller-built */
} SspMessage;

/* True if `type` is registered for message kind `kind` (END counts). */
bool ssp_frame_registered(uint8_t kind, uint8_t type);

/* Frame name for rendering ("REQ_HEADER", ...) or NULL when unregistered. */
const char *ssp_frame_name(uint8_t type);

/*
 * Decode a complete request or response (by msgKind) with every WF §2 and
 * §3 check: header, framing, per-frame layouts and checks, grammar
 * (ssp_grammar_*), unknown-frame skip-and-keep, wire versions 1-3 and their
 * layout differences.  On success *msg owns an arena (ssp_message_free).
 * On failure *msg is left empty and err is set (SSP_ERR_INVALID_REQUEST, or
 * SSP_ERR_EMPTY_COMMIT, or SSP_ERR_INTERNAL on OOM).
 */
bool ssp_decode_message(const uint8_t *data, size_t len, SspMessage *msg,
						SspError *err);

/*
 * Whether a request asks for a bootstrap: a SUBSCRIPTION frame with cursor -1 or a
 * bootstrapState (SPEC §4.7; wire-format.md §4.3).  Reads the frame headers and the
 * SUBSCRIPTION payloads only, allocates nothing; anything it cannot read (not a request, a
 * truncated frame) answers false.  For scheduling a round (classify.c), never for validation.
 */
bool ssp_request_bootstraps(const uint8_t *data, size_t len);

/*
 * Whether a request holds a PUSH_COMMIT frame (SPEC §3.1), so that its round will take its
 * partition's lock (SPEC §6.8).  Reads the frame headers only, like ssp_request_bootstraps,
 * with the same answer (false) for anything it cannot read.  For scheduling (syncular-gateway's
 * group commit, docs/gateway.md), never for validation.
 */
bool ssp_request_pushes(const uint8_t *data, size_t len);

/* Free the arena of a decoded message and zero the struct. */
void ssp_message_free(SspMessage *msg);

/* Streaming writers (WF §2).  Header: magic, wire (1..3), kind, flags 0. */
bool ssp_write_message_header(SspBuf *out, uint16_t wire, uint8_t kind,
							  SspError *err);

/*
 * Append one frame (type, u32 length, payload) for wire version `wire`.
 * Validates the frame like the decoder would (non-empty ids, enums,
 * presence ties, sorted-unique map keys (sorted on output), i64 range, JSON
 * validity, version-specific fields: v1 has no epoch fields, v1/v2 no
 * conflictColumns) and normalizes PUSH_RESULT_DETAILS JSON (WF §3.4).
 * Does NOT check grammar; use SspGrammar for that.
 */
bool ssp_write_frame(SspBuf *out, uint16_t wire, const SspFrame *f,
					 SspError *err);

/*
 * Streaming COMMIT writer (WF §3.4): one COMMIT frame written into `out` change by change, as
 * the writer's caller reads them, with the same field writers and bytes as ssp_write_frame of
 * the whole commit.  begin writes the frame header and the fields before the changes (the
 * change count and frame length as 0), add appends one change record, end fills in both;
 * abandon drops the frame (out->len back to `start`).  The frame is out->data[start ..
 * out->len).  A failing call sets err (as ssp_write_frame would) and drops the frame.  No
 * grammar check: the caller writes COMMIT inside an active SUB_START .. SUB_END.
 */
typedef struct SspCommitWriter
{
	SspBuf     *out;
	size_t      start;          /* offset of the frame's type byte */
	size_t      count_at;       /* offset of the change count */
	uint32_t    ntables;
	uint32_t    nchanges;       /* change records written */
} SspCommitWriter;

bool ssp_commit_begin(SspCommitWriter *w, SspBuf *out, int64_t commit_seq,
					  int64_t created_at_ms, const SspStr *actor_id, uint32_t ntables,
					  const SspStr *tables, SspError *err);
bool ssp_commit_add(SspCommitWriter *w, const SspChange *ch, SspError *err);
bool ssp_commit_end(SspCommitWriter *w, SspError *err);
void ssp_commit_abandon(SspCommitWriter *w);

/* Append END (00 00 00 00 00). */
bool ssp_write_end(SspBuf *out, SspError *err);

/* Header + every frame + END, with the grammar checked as on decode. */
bool ssp_encode_message(const SspMessage *msg, SspBuf *out, SspError *err);

/*
 * Grammar state machine (WF §3.1, §3.3) shared by the decoder and encoder;
 * usable by a streaming producer to assert its own output.  Call step() for
 * every frame after init() (header frame included), then finish() at END.
 * The previous frame passed to step() must stay valid until the next call
 * (PUSH_RESULT_DETAILS is checked against it).
 */
typedef struct SspGrammar
{
	uint8_t         kind;
	uint32_t        count;      /* frames seen */
	const SspFrame *prev;       /* previous frame */
	/* request */
	bool            seen_push;
	bool            seen_pull;
	/* response */
	bool            body_seen;  /* any frame after the header */
	bool            seen_lease;
	bool            seen_sub_start;
	bool            sub_open;
	uint8_t         sub_content; /* 0 none, 1 commits, 2 segments */
	bool            seen_error;
} SspGrammar;

void ssp_grammar_init(SspGrammar *g, uint8_t kind);
bool ssp_grammar_step(SspGrammar *g, const SspFrame *f, SspError *err);
bool ssp_grammar_finish(SspGrammar *g, SspError *err);

/* Check/normalize a PUSH_RESULT_DETAILS detailsJson (WF §3.4).  normalize
 * appends the canonical compact text to out. */
bool ssp_details_json_valid(const char *s, size_t len, SspError *err);
bool ssp_details_json_normalize(const char *s, size_t len, SspBuf *out,
								SspError *err);

/* ------------------------------------------------------------------ */
/* SSG2 rows segments (WF §4.8)                                        */
/* ------------------------------------------------------------------ */

#define SSP_SEGMENT_BLOCK_MAX_ROWS  1000
#define SSP_SEGMENT_BLOCK_MAX_BYTES (256 * 1024)

typedef struct SspSegmentRow
{
	int64_t   server_version;   /* >= 1 */
	SspBytes  raw;              /* the full-row bytes */
	SspValue *values;           /* ncolumns decoded values */
} SspSegmentRow;

typedef struct SspSegmentBlock
{
	uint32_t       nrows;       /* >= 1 */
	SspSegmentRow *rows;
} SspSegmentBlock;

typedef struct SspSegment
{
	uint16_t         format_version; /* 1 */
	SspStr           table;
	int32_t          schema_version;
	uint16_t         ncolumns;
	SspColumn       *columns;
	uint32_t         nblocks;
	SspSegmentBlock *blocks;
	SspArena        *arena;     /* owns decoded data */
} SspSegment;

/*
 * Decode and validate an SSG2 rows segment; rows are checked with the
 * full-row codec against the segment's own column table.  Errors
 * (SSP_ERR_INVALID_REQUEST): bad magic/version/flags, reserved column flag
 * bits, unknown tag, block length mismatch, rowCount 0 block, serverVersion
 * < 1, row violations, truncation, missing end marker, trailing bytes.
 * With seg == NULL only validates (no allocation).
 */
bool ssp_segment_decode(const uint8_t *data, size_t len, SspSegment *seg,
						SspError *err);
void ssp_segment_free(SspSegment *seg);

/* Re-encode a decoded (or caller-built) segment keeping its block split.
 * Each row is written from `raw` (re-validated) when raw.ptr is set, else
 * encoded from `values`.  Errors: SSP_ERR_INVALID_REQUEST, SSP_ERR_INTERNAL. */
bool ssp_segment_encode(const SspSegment *seg, SspBuf *out, SspError *err);

/*
 * Streaming SSG2 writer.  begin() writes the header into out; add_row()
 * buffers one record and cuts a block at SSP_SEGMENT_BLOCK_MAX_ROWS rows or
 * when it would pass SSP_SEGMENT_BLOCK_MAX_BYTES; flush_block() cuts one
 * explicitly; finish() flushes and writes the end marker.  `cols` must
 * outlive the writer.  discard() frees the writer's buffers after an error
 * (finish() frees them itself).
 */
typedef struct SspSegmentWriter
{
	SspBuf          *out;
	const SspColumn *cols;
	uint16_t         ncols;
	SspBuf           block;     /* records of the open block */
	uint32_t         block_rows;
	uint64_t         total_rows;
	bool             validate;  /* add_row re-checks rows (default true) */
} SspSegmentWriter;

bool ssp_segment_begin(SspSegmentWriter *w, SspBuf *out, const char *table,
					   uint32_t table_len, int32_t schema_version,
					   const SspColumn *cols, uint16_t ncols, SspError *err);
/* row/row_len: full-row bytes (WF §4.2); server_version >= 1. */
bool ssp_segment_add_row(SspSegmentWriter *w, int64_t server_version,
						 const uint8_t *row, size_t row_len, SspError *err);
/* Convenience: encode vals with ssp_row_encode_full, then add. */
bool ssp_segment_add_values(SspSegmentWriter *w, int64_t server_version,
							const SspValue *vals, SspError *err);
bool ssp_segment_flush_block(SspSegmentWriter *w, SspError *err);
bool ssp_segment_finish(SspSegmentWriter *w, SspError *err);
void ssp_segment_writer_discard(SspSegmentWriter *w);

/* ------------------------------------------------------------------ */
/* Canonical JSON rendering (SPEC §11), compact, appended to out.      */
/* ------------------------------------------------------------------ */

/* {"magic":"SSP2","wireVersion":n,"msgKind":"request"|"response","frames":[...]};
 * END is not rendered.  Errors: SSP_ERR_INTERNAL (OOM, unrenderable frame). */
bool ssp_render_message(const SspMessage *msg, SspBuf *out, SspError *err);
/* One frame object {"type":"COMMIT",...}; unknown frames render as
 * {"type":"UNKNOWN","frameType":n,"payload":"<base64>"}. */
bool ssp_render_frame(uint16_t wire, const SspFrame *f, SspBuf *out,
					  SspError *err);
/* {"magic":"SSG2","formatVersion":1,"table","schemaVersion","columns":[{name,
 * type,nullable}],"blocks":[[{"serverVersion":n,"values":{col:value}}]]};
 * needs decoded row values (ssp_segment_decode). */
bool ssp_render_segment(const SspSegment *seg, SspBuf *out, SspError *err);

#ifdef __cplusplus
}
#endif

#endif							/* SSP_H */
