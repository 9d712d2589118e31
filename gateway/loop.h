/*
 * loop.h — the event loop (loop.c): descriptors with callbacks, one-shot timers.  A leaf.
 */
#ifndef SYNCULAR_GATEWAY_LOOP_H
#define SYNCULAR_GATEWAY_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#define gw_container_of(p, T, m) ((T *) ((char *) (p) - offsetof(T, m)))

typedef void (*GwFdFn) (int fd, uint32_t events, void *arg);

typedef struct GwTimer GwTimer;
typedef void (*GwTimerFn) (GwTimer *t);
struct GwTimer
{
	int64_t     at_us;
	GwTimerFn   fn;
	GwTimer    *next;
	bool        armed;
};

int     gw_loop_init(void);
int     gw_loop_watch(int fd, uint32_t events, GwFdFn fn, void *arg);
void    gw_loop_unwatch(int fd);
void    gw_timer_after(GwTimer *t, GwTimerFn fn, int64_t after_us);
void    gw_timer_cancel(GwTimer *t);
void    gw_loop_once(int max_ms);
void    gw_loop_shutdown(void);
int64_t gw_loop_now_ns(void);        /* monotonic clock, any thread */
int64_t gw_loop_now_us(void);

#endif
