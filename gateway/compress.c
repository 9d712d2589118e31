/*
 * compress.c — gzip of /sync answers (SPEC §1.3) off the event loop.
 *
 * A bootstrap page is half a megabyte; compressing it costs a millisecond or more, and on the
 * loop thread every other socket (a small round, /healthz, realtime deltas) waited that long.
 * Here --gzip-threads worker threads compress: the loop hands over the answer's bytes (still in
 * libpq's PGresult: no copy) with a release function, a worker compresses them with libdeflate
 * (one compressor per thread, kept: no per-answer state allocation) and releases the input, and
 * the loop learns of finished jobs through an eventfd it watches, and answers there.  An answer
 * under --gzip-thread-min (64 KiB: about 0.1 ms at level 1) is compressed on the loop, where
 * it costs less than the hand-over to a thread (a wake-up, the eventfd, one more loop turn).
 * The queue is
 * bounded in bytes (--gzip-queue): past it an answer goes uncompressed, which Accept-Encoding
 * allows unless the client refused identity (RFC 9110 §12.5.3); such an answer always waits its
 * turn.  --gzip-threads 0 compresses on the loop (a one-core host), counted apart in /metrics.
 *
 * Threads share only the queue, the finished list and the counters, all under one mutex; the
 * owner of a job (the request) is read and cleared on the loop only.  A leaf above loop.c.
 */
#include "gateway.h"
#include "loop.h"

#include <errno.h>
#include <libdeflate.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

struct GwZJob
{
	const uint8_t *in;
	size_t      inlen;
	void        (*release) (void *);    /* frees the input (PQclear), in the worker */
	void       *release_cls;
	GwZDone     done;
	void       *owner;                  /* NULL: the requester went away (loop only) */
	uint8_t    *out;                    /* malloc'd result; NULL: out of memory */
	size_t      outlen;
	int64_t     ns;                     /* time spent compressing it */
	bool        running;
	GwZJob     *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static GwZJob *queue_head, *queue_tail;     /* waiting for a worker */
static GwZJob *finished;                    /* waiting for the loop */
static size_t queued_bytes;                 /* input bytes queued or being compressed */
static bool stopping;
static pthread_t threads[MAX_THREADS];
static int nthreads;
static int efd = -1;
static GwGzipStats stats;
static struct libdeflate_compressor *loop_c;   /* the loop thread's (answers under the threshold) */
static uint8_t *loop_scratch;
static size_t loop_cap;

/* gzip of in at level with a kept compressor: 0 ok (*out malloc'd, exactly *outlen bytes) */
static int
deflate_with(struct libdeflate_compressor *c, uint8_t **scratch, size_t *cap, const uint8_t *in,
			 size_t inlen, uint8_t **out, size_t *outlen)
{
	size_t bound = libdeflate_gzip_compress_bound(c, inlen);
	size_t n;

	if (bound > *cap)
	{
		uint8_t *nb = realloc(*scratch, bound);

		if (!nb)
			return -1;
		*scratch = nb;
		*cap = bound;
	}
	n = libdeflate_gzip_compress(c, in, inlen, *scratch, *cap);
	/* the scratch buffer stays (its pages are already touched); the answer gets its own copy */
	if (n == 0 || !(*out = malloc(n)))
		return -1;
	memcpy(*out, *scratch, n);
	*outlen = n;
	return 0;
}

/* j compressed; j->ns its wall time, which is its CPU time unless the thread was preempted
 * (compression does not block) */
static void
compress_job(struct libdeflate_compressor *c, uint8_t **scratch, size_t *cap, GwZJob *j)
{
	int64_t t0 = gw_loop_now_ns();

	if (!c || deflate_with(c, scratch, cap, j->in, j->inlen, &j->out, &j->outlen) != 0)
		j->out = NULL;
	if (j->release)
		j->release(j->release_cls);
	j->in = NULL;
	j->release = NULL;
	j->ns = gw_loop_now_ns() - t0;
}

static void *
worker(void *arg)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(gw_cfg.gzip_level);
	uint8_t *scratch = NULL;
	size_t cap = 0;
	uint64_t one = 1;

	(void) arg;
	pthread_mutex_lock(&mu);
	for (;;)
	{
		GwZJob *j;

		while (!queue_head && !stopping)
			pthread_cond_wait(&cv, &mu);
		if (stopping)
			break;
		j = queue_head;
		queue_head = j->next;
		if (!queue_head)
			queue_tail = NULL;
		j->running = true;
		pthread_mutex_unlock(&mu);

		compress_job(c, &scratch, &cap, j);

		pthread_mutex_lock(&mu);
		j->next = finished;
		finished = j;
		if (write(efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			abort();            /* the loop could never learn of the answer */
	}
	pthread_mutex_unlock(&mu);
	free(scratch);
	if (c)
		libdeflate_free_compressor(c);
	return NULL;
}

static void
job_free(GwZJob *j)
{
	if (j->release)
		j->release(j->release_cls);
	free(j->out);
	free(j);
}

/* on the loop: hand finished answers to their requests; those whose requester left are freed */
static void
on_finished(int fd, uint32_t events, void *arg)
{
	uint64_t n;
	GwZJob *list;

	(void) events, (void) arg;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		gw_log("gzip: eventfd read failed: %s", strerror(errno));
	pthread_mutex_lock(&mu);
	list = finished;
	finished = NULL;
	for (GwZJob *j = list; j; j = j->next)
	{
		queued_bytes -= j->inlen;
		stats.worker_answers++;
		stats.worker_in_bytes += j->inlen;
		stats.worker_out_bytes += j->outlen;
		stats.worker_ns += j->ns;
	}
	pthread_mutex_unlock(&mu);
	while (list)
	{
		GwZJob *j = list;

		list = j->next;
		if (j->owner)
		{
			j->done(j->owner, j->out, j->outlen);
			j->out = NULL;      /* the requester took it */
		}
		job_free(j);
	}
}

int
gw_gzip_init(void)
{
	sigset_t all, old;

	if (gw_cfg.gzip_threads == 0)
		return 0;
	if ((efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 || gw_loop_watch(efd, EPOLLIN, on_finished, NULL) != 0)
		return -1;
	/* signals go to the loop thread (main.c's handlers end its epoll_wait) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (nthreads = 0; nthreads < gw_cfg.gzip_threads && nthreads < MAX_THREADS; nthreads++)
		if (pthread_create(&threads[nthreads], NULL, worker, NULL) != 0)
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return nthreads == gw_cfg.gzip_threads ? 0 : -1;
}

/* after the HTTP layer stopped (every requester is gone): workers end, what is left is freed */
void
gw_gzip_shutdown(void)
{
	if (stats.cancelled)
		gw_log("gzip: %llu queued answer(s) dropped: their requests ended first",
			   (unsigned long long) stats.cancelled);
	pthread_mutex_lock(&mu);
	stopping = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	nthreads = 0;
	while (queue_head)
	{
		GwZJob *j = queue_head;

		queue_head = j->next;
		job_free(j);
	}
	queue_tail = NULL;
	while (finished)
	{
		GwZJob *j = finished;

		finished = j->next;
		job_free(j);
	}
	if (efd >= 0)
	{
		gw_loop_unwatch(efd);
		close(efd);
		efd = -1;
	}
	if (loop_c)
		libdeflate_free_compressor(loop_c);
	free(loop_scratch);
	loop_c = NULL;
	loop_scratch = NULL;
	loop_cap = 0;
}

/* on the loop (an answer under --gzip-thread-min, or --gzip-threads 0): the same compression,
 * counted apart; the loop's thread has its own compressor */
static GwZJob *
on_loop(const uint8_t *in, size_t inlen, void (*release) (void *), void *release_cls, GwZDone done,
		void *owner)
{
	GwZJob j = {in, inlen, release, release_cls, done, owner, NULL, 0, 0, false, NULL};

	if (!loop_c)
		loop_c = libdeflate_alloc_compressor(gw_cfg.gzip_level);
	compress_job(loop_c, &loop_scratch, &loop_cap, &j);
	stats.loop_answers++;
	stats.loop_in_bytes += inlen;
	stats.loop_out_bytes += j.outlen;
	stats.loop_ns += j.ns;
	done(owner, j.out, j.outlen);
	return NULL;
}

GwZJob *
gw_gzip_submit(const uint8_t *in, size_t inlen, void (*release) (void *), void *release_cls, bool must,
			   GwZDone done, void *owner, bool *queued)
{
	GwZJob *j;

	*queued = false;
	if (gw_cfg.gzip_threads == 0 || inlen < gw_cfg.gzip_thread_min)
	{
		*queued = true;
		return on_loop(in, inlen, release, release_cls, done, owner);
	}
	pthread_mutex_lock(&mu);
	if (!must && queued_bytes + inlen > gw_cfg.gzip_queue)
	{
		stats.skipped++;
		pthread_mutex_unlock(&mu);
		return NULL;            /* the caller answers uncompressed */
	}
	pthread_mutex_unlock(&mu);
	if (!(j = calloc(1, sizeof(GwZJob))))
		return NULL;
	j->in = in;
	j->inlen = inlen;
	j->release = release;
	j->release_cls = release_cls;
	j->done = done;
	j->owner = owner;
	pthread_mutex_lock(&mu);
	queued_bytes += inlen;
	if (queue_tail)
		queue_tail->next = j;
	else
		queue_head = j;
	queue_tail = j;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	*queued = true;
	return j;
}

/* the requester went away: a job still queued is dropped now, a running one when it finishes */
void
gw_gzip_cancel(GwZJob *j)
{
	bool dropped = false;

	if (!j)
		return;
	j->owner = NULL;
	pthread_mutex_lock(&mu);
	if (!j->running)
	{
		for (GwZJob **pp = &queue_head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next)
			if (*pp == j)
			{
				*pp = j->next;
				if (queue_tail == j)
					queue_tail = prev;
				queued_bytes -= j->inlen;
				stats.cancelled++;
				dropped = true;
				break;
			}
	}
	pthread_mutex_unlock(&mu);
	if (dropped)
		job_free(j);
}

void
gw_gzip_stats(GwGzipStats *out)
{
	pthread_mutex_lock(&mu);
	*out = stats;
	out->queued_bytes = queued_bytes;
	pthread_mutex_unlock(&mu);
}
