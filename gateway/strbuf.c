/*
 * strbuf.c — a growing NUL-terminated string for a text the gateway builds piece by piece: the
 * Prometheus exposition (metrics.c).  A leaf: it calls nothing of the gateway.
 */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
gw_str_add(GwStr *s, const char *bytes, size_t n)
{
	if (s->oom)
		return;
	if (s->len + n + 1 > s->cap)
	{
		size_t cap = s->cap ? s->cap * 2 : 256;
		char *p;

		while (cap < s->len + n + 1)
			cap *= 2;
		if (!(p = realloc(s->p, cap)))
		{
			s->oom = true;
			return;
		}
		s->p = p;
		s->cap = cap;
	}
	memcpy(s->p + s->len, bytes, n);
	s->len += n;
	s->p[s->len] = '\0';
}

void
gw_str_printf(GwStr *s, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		gw_str_add(s, tmp, (size_t) n < sizeof(tmp) ? (size_t) n : sizeof(tmp) - 1);
}
