/*
 * log.c — gw_log: one line on stderr with a UTC timestamp.  A leaf every file may call.
 */
#include "gateway.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

void
gw_log(const char *fmt, ...)
{
	va_list ap;
	struct timespec ts;
	struct tm tm;
	char when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ syncular-gateway: ", when, ts.tv_nsec / 1000000);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
