/*
 * ssp_internal.h — helpers shared by the codec's .c files; not installed,
 * not for use outside src/codec/.
 */
#ifndef SSP_INTERNAL_H
#define SSP_INTERNAL_H

#include "ssp.h"

#if defined(__GNUC__)
#define SSP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SSP_PRINTF(a, b)
#endif

/* The code of a malformed message, and a step whose failure (err already set) fails its caller. */
#define INV SSP_ERR_INVALID_REQUEST
#define TRY(x) do { if (!(x)) return false; } while (0)

/* The envelope's magic (WF §2). */
#define SSP_MAGIC_SSP2 "SSP2"

/* Whether type is a frame type registered for either kind of message (grammar.c). */
bool ssp_frame_registered_any(uint8_t type);

/* Set err (if non-NULL) and return false, so callers can `return ssp_fail(...)`. */
bool ssp_fail(SspError *err, const char *code, const char *fmt, ...) SSP_PRINTF(3, 4);
bool ssp_oom(SspError *err);

/*
 * Bounds-checked little-endian reader over an input slice.  Every getter
 * checks the remaining length first; on failure it sets err with the
 * reader's `what` label and offset (absolute, via `base`).
 */
typedef struct SspReader
{
	const uint8_t *p;
	size_t         len;
	size_t         pos;
	size_t         base;        /* offset of p[0] in the whole input, for messages */
	const char    *what;        /* e.g. "frame 0x02" */
	SspArena      *arena;       /* where strings are copied; NULL = don't copy */
} SspReader;

void   ssp_rd_init(SspReader *r, const uint8_t *p, size_t len, size_t base,
				   const char *what, SspArena *arena);
static inline size_t ssp_rd_left(const SspReader *r) { return r->len - r->pos; }

bool ssp_rd_truncated(SspReader *r, SspError *err);
bool ssp_rd_u8(SspReader *r, uint8_t *v, SspError *err);
bool ssp_rd_u16(SspReader *r, uint16_t *v, SspError *err);
bool ssp_rd_u32(SspReader *r, uint32_t *v, SspError *err);
bool ssp_rd_i32(SspReader *r, int32_t *v, SspError *err);
bool ssp_rd_i64(SspReader *r, int64_t *v, SspError *err);
bool ssp_rd_f64(SspReader *r, double *v, SspError *err);
bool ssp_rd_bool(SspReader *r, bool *v, SspError *err);
bool ssp_rd_opt(SspReader *r, bool *present, SspError *err);
bool ssp_rd_raw(SspReader *r, size_t n, const uint8_t **p, SspError *err);
/* str: UTF-8 checked; copied NUL-terminated into r->arena when set. */
bool ssp_rd_str(SspReader *r, SspStr *s, SspError *err);
/* json: a str that must pass ssp_json_valid. */
bool ssp_rd_json(SspReader *r, SspStr *s, SspError *err);
bool ssp_rd_bytes(SspReader *r, SspBytes *b, SspError *err);
/* count: u32 checked so that count * min_elem <= bytes left. */
bool ssp_rd_count(SspReader *r, uint32_t *n, size_t min_elem, SspError *err);
/* Fail unless the reader is fully consumed. */
bool ssp_rd_done(SspReader *r, SspError *err);

/* Allocate n elements of size sz in the arena, overflow-checked, zeroed. */
void  *ssp_arena_array(SspArena *a, size_t n, size_t sz);
/* Copy bytes into the arena with a trailing NUL. */
char  *ssp_arena_strdup(SspArena *a, const void *p, size_t n);

bool   ssp_i64_safe(int64_t v);

/*
 * Field writers (fields.c, WF §1), shared by every frame encoder: each refuses what the decoder
 * would refuse, naming `field` in the message.
 */
bool ssp_wr_str(SspBuf *out, const SspStr *s, const char *field, SspError *err);
bool ssp_wr_nonempty(SspBuf *out, const SspStr *s, const char *field, SspError *err);
bool ssp_wr_json(SspBuf *out, const SspStr *s, const char *field, SspError *err);
bool ssp_wr_i64(SspBuf *out, int64_t v, const char *field, SspError *err);
bool ssp_wr_bytes(SspBuf *out, const SspBytes *b, const char *field, SspError *err);
bool ssp_wr_enum(SspBuf *out, uint8_t v, uint8_t max, const char *field, SspError *err);
bool ssp_wr_opt_str(SspBuf *out, bool has, const SspStr *s, const char *field, SspError *err);
bool ssp_wr_opt_json(SspBuf *out, bool has, const SspStr *s, const char *field, SspError *err);
bool ssp_wr_opt_i64(SspBuf *out, bool has, int64_t v, const char *field, SspError *err);
bool ssp_wr_opt_i32(SspBuf *out, bool has, int32_t v);
bool ssp_wr_scope_map(SspBuf *out, const SspScopeMap *m, const char *field, SspError *err);
bool ssp_wr_str_map(SspBuf *out, const SspStrMap *m, const char *field, SspError *err);

/* The COMMIT frame's payload (commit.c; ssp_write_frame writes its type and length). */
bool ssp_enc_commit(SspBuf *out, const SspCommit *c, SspError *err);

/* JSON helpers (json.c). */
bool ssp_json_escape(SspBuf *out, const char *s, size_t len);  /* with quotes */
bool ssp_render_double(SspBuf *out, double d);                 /* JS-like, null if non-finite */
bool ssp_buf_printf(SspBuf *out, const char *fmt, ...) SSP_PRINTF(2, 3);

/* Row codec helper used by the segment decoder: decode one full row from
 * the reader (no exact-consumption check). */
bool ssp_row_read_full(SspReader *r, const SspColumn *cols, uint32_t ncols,
					   SspValue *out, SspError *err);

#endif							/* SSP_INTERNAL_H */
