/*
 * strbuf.h — a growing NUL-terminated string (strbuf.c).  A leaf.  A failed allocation sets oom
 * and makes every later call a no-op, so a builder appends without checking and tests oom once
 * at the end; free p with free().
 */
#ifndef SYNCULAR_GATEWAY_STRBUF_H
#define SYNCULAR_GATEWAY_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct GwStr
{
	char   *p;          /* NULL until the first append; then always NUL-terminated */
	size_t  len, cap;   /* bytes used (without the NUL) and allocated */
	bool    oom;        /* an allocation failed: p holds what was appended before */
} GwStr;

void gw_str_add(GwStr *s, const char *bytes, size_t n);
/* at most 511 bytes of output per call (longer output is cut there) */
void gw_str_printf(GwStr *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
