/*
 * loop.c — the gateway's one event loop (pgbouncer style: one process, one loop thread): file
 * descriptors with callbacks on one level-triggered epoll set, and one-shot timers.  Everything
 * the gateway waits for goes through here: libmicrohttpd's own epoll descriptor (http.c), the
 * pool's non-blocking libpq sockets (pool.c) and the upgraded WebSocket sockets (ws.c).
 *
 * A leaf: it calls only the callbacks it was given.  Watches are kept in a table indexed by
 * descriptor, so an event that was already returned by epoll_wait for a descriptor unwatched
 * by an earlier callback of the same turn finds no callback and is dropped (no dangling
 * pointer); a descriptor number reused in that turn may get one spurious wake-up, which every
 * callback tolerates (non-blocking I/O answers EAGAIN).
 */
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

typedef struct Watch
{
	GwFdFn      fn;
	void       *arg;
	uint32_t    events;
} Watch;

static int epfd = -1;
static Watch *watches;
static int nwatches;
static GwTimer *timers;         /* sorted by at_us */

/* the monotonic clock (vDSO, no system call); safe on any thread */
int64_t
gw_loop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
gw_loop_now_us(void)
{
	return gw_loop_now_ns() / 1000;
}

int
gw_loop_init(void)
{
	epfd = epoll_create1(EPOLL_CLOEXEC);
	return epfd < 0 ? -1 : 0;
}

static bool
grow(int fd)
{
	int n = nwatches ? nwatches : 256;
	Watch *w;

	while (n <= fd)
		n *= 2;
	if (n == nwatches)
		return true;
	if (!(w = realloc(watches, (size_t) n * sizeof(Watch))))
		return false;
	memset(w + nwatches, 0, (size_t) (n - nwatches) * sizeof(Watch));
	watches = w;
	nwatches = n;
	return true;
}

/*
 * Watch fd for events (EPOLLIN/EPOLLOUT), or change what is watched.  A descriptor closed and
 * reopened under the same number by a library (libpq does this when it tries the next address
 * of a host) has left the epoll set with its close: MOD answers ENOENT, and it is added again.
 */
int
gw_loop_watch(int fd, uint32_t events, GwFdFn fn, void *arg)
{
	struct epoll_event ev;

	if (fd < 0 || !grow(fd))
		return -1;
	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.fd = fd;
	if (watches[fd].fn)
	{
		if (epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) != 0 &&
			(errno != ENOENT || epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0))
			return -1;
	}
	else if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0 &&
			 (errno != EEXIST || epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) != 0))
		return -1;
	watches[fd].fn = fn;
	watches[fd].arg = arg;
	watches[fd].events = events;
	return 0;
}

void
gw_loop_unwatch(int fd)
{
	if (fd < 0 || fd >= nwatches || !watches[fd].fn)
		return;
	(void) epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);   /* gone already when it was closed */
	memset(&watches[fd], 0, sizeof(Watch));
}

void
gw_timer_cancel(GwTimer *t)
{
	for (GwTimer **pp = &timers; *pp; pp = &(*pp)->next)
		if (*pp == t)
		{
			*pp = t->next;
			break;
		}
	t->armed = false;
	t->next = NULL;
}

/* run fn(t) once, after_us microseconds from now (0: at the end of this loop turn) */
void
gw_timer_after(GwTimer *t, GwTimerFn fn, int64_t after_us)
{
	GwTimer **pp = &timers;

	if (t->armed)
		gw_timer_cancel(t);
	t->fn = fn;
	t->at_us = gw_loop_now_us() + (after_us > 0 ? after_us : 0);
	while (*pp && (*pp)->at_us <= t->at_us)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
	t->armed = true;
}

/* milliseconds until the first timer, capped at max_ms */
static int
timeout_ms(int max_ms)
{
	int64_t d;

	if (!timers)
		return max_ms;
	d = (timers->at_us - gw_loop_now_us() + 999) / 1000;
	return d < 0 ? 0 : d < max_ms ? (int) d : max_ms;
}

static void
run_timers(void)
{
	int64_t now = gw_loop_now_us();

	/* a timer armed by a callback for "now" runs in the next turn, after I/O had its chance */
	while (timers && timers->at_us <= now)
	{
		GwTimer *t = timers;

		timers = t->next;
		t->next = NULL;
		t->armed = false;
		t->fn(t);
	}
}

/* one turn: wait at most max_ms for I/O or the first timer, dispatch, run due timers */
void
gw_loop_once(int max_ms)
{
	struct epoll_event ev[128];
	int n = epoll_wait(epfd, ev, 128, timeout_ms(max_ms));

	for (int i = 0; i < n; i++)
	{
		int fd = ev[i].data.fd;

		if (fd < nwatches && watches[fd].fn)
			watches[fd].fn(fd, ev[i].events, watches[fd].arg);
	}
	run_timers();
}

void
gw_loop_shutdown(void)
{
	if (epfd >= 0)
		close(epfd);
	epfd = -1;
	free(watches);
	watches = NULL;
	nwatches = 0;
	timers = NULL;
}
