#define _GNU_SOURCE
/*
 * rtclient.c — the realtime bench's socket client (bench/gateway_realtime.py): N WebSockets to
 * one URL, one epoll loop, no per-message work beyond reading the frame header, so that the
 * measured latency is the server's and not the client's.
 *
 *   rtclient HOST PORT PATH N ROUNDS [ACKBASE]
 *
 * PATH may hold one %d, replaced by the socket's index (one clientId per socket).  With ACKBASE
 * every socket acks every delta as the SDK does (SPEC §8.2): on the k-th binary message it
 * receives (k = 1, 2, ...) it sends {"type":"ack","cursor":ACKBASE+k} at once (the bench pushes
 * one commit per round, so ACKBASE is the partition's head before the first push).
 *
 * Opens N sockets (upgrade request, 101, then each socket's first text message: the hello),
 * prints "READY" and then, for each of ROUNDS rounds, waits until every socket received one
 * binary message and prints one line: the CLOCK_REALTIME arrival time in microseconds of each
 * socket's message, in socket order.  Text messages (heartbeats, events) are skipped.  Exits 1
 * on any error.  Built by the bench: cc -O2 -o rtclient bench/rtclient.c
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct Conn
{
	int      fd;
	int      state;         /* 0 awaiting 101, 1 awaiting hello, 2 open */
	size_t   len;
	uint8_t  buf[1 << 16];
	int      msg_op;        /* opcode of the message being received (continuations) */
	int      got;           /* binary messages received this round */
	long long total;        /* binary messages received since the hello */
	long long at;           /* arrival of this round's message */
} Conn;

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
die(const char *m)
{
	fprintf(stderr, "rtclient: %s (%s)\n", m, strerror(errno));
	exit(1);
}

static long long ackbase = -1;

/* a masked text frame (RFC 6455 §5.3: a client masks; key 0 leaves the bytes as they are) */
static void
send_ack(Conn *c)
{
	char body[64];
	uint8_t f[80];
	int n = snprintf(body, sizeof(body), "{\"type\":\"ack\",\"cursor\":%lld}", ackbase + c->total);

	f[0] = 0x81;
	f[1] = 0x80 | (uint8_t) n;
	memset(f + 2, 0, 4);
	memcpy(f + 6, body, (size_t) n);
	if (write(c->fd, f, (size_t) n + 6) != n + 6)
		die("ack write");
}

/* consume complete frames from c->buf; returns number of binary messages that started */
static int
frames(Conn *c, long long t)
{
	size_t off = 0;
	int started = 0;

	while (c->len - off >= 2)
	{
		uint8_t *p = c->buf + off;
		int op = p[0] & 0x0f;
		uint64_t n = p[1] & 0x7f;
		size_t h = 2;

		if (n == 126)
		{
			if (c->len - off < 4)
				break;
			n = (uint64_t) p[2] << 8 | p[3];
			h = 4;
		}
		else if (n == 127)
		{
			if (c->len - off < 10)
				break;
			n = 0;
			for (int i = 0; i < 8; i++)
				n = n << 8 | p[2 + i];
			h = 10;
		}
		if (c->len - off < h + n)
		{
			if (h + n > sizeof(c->buf))
			{
				errno = EMSGSIZE;
				die("message larger than the client buffer");
			}
			break;
		}
		if (op == 1 || op == 2)
		{
			c->msg_op = op;
			if (op == 2)
			{
				started++;
				if (c->got++ == 0)
					c->at = t;
				c->total++;
				if (ackbase >= 0)
					send_ack(c);
			}
			else if (c->state == 1)
				c->state = 2;       /* the hello */
		}
		off += h + n;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	return started;
}

int
main(int argc, char **argv)
{
	const char *host, *path;
	int port, n, rounds, ep, ready = 0;
	Conn *cs;
	struct sockaddr_in sa;
	struct epoll_event ev, evs[256];

	if (argc != 6 && argc != 7)
	{
		fprintf(stderr, "usage: rtclient HOST PORT PATH N ROUNDS [ACKBASE]\n");
		return 2;
	}
	host = argv[1], port = atoi(argv[2]), path = argv[3], n = atoi(argv[4]), rounds = atoi(argv[5]);
	if (argc == 7)
		ackbase = atoll(argv[6]);
	if (!(cs = calloc((size_t) n, sizeof(Conn))) || (ep = epoll_create1(0)) < 0)
		die("setup");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t) port);
	inet_pton(AF_INET, host, &sa.sin_addr);
	for (int i = 0; i < n; i++)
	{
		char req[2048], target[1024];
		int one = 1, len;

		if ((cs[i].fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
			connect(cs[i].fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
			die("connect");
		setsockopt(cs[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		snprintf(target, sizeof(target), path, i);     /* a PATH without %d is used as is */
		len = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
					   "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
					   "Sec-WebSocket-Version: 13\r\n\r\n", target, host, port);
		if (write(cs[i].fd, req, (size_t) len) != len)
			die("write");
		ev.events = EPOLLIN;
		ev.data.u32 = (uint32_t) i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev) < 0)
			die("epoll_ctl");
	}
	for (int round = -1; round < rounds;)
	{
		int k = epoll_wait(ep, evs, 256, 60000);
		long long t = now_us();

		if (k <= 0)
			die("timeout waiting for the server");
		for (int e = 0; e < k; e++)
		{
			Conn *c = &cs[evs[e].data.u32];
			ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);

			if (r <= 0)
				die("socket closed");
			c->len += (size_t) r;
			if (c->state == 0)
			{
				uint8_t *end = memmem(c->buf, c->len, "\r\n\r\n", 4);

				if (!end)
					continue;
				if (memcmp(c->buf, "HTTP/1.1 101", 12) != 0)
				{
					errno = EPROTO;
					die("upgrade refused");
				}
				memmove(c->buf, end + 4, c->len - (size_t) (end + 4 - c->buf));
				c->len -= (size_t) (end + 4 - c->buf);
				c->state = 1;
			}
			frames(c, t);
		}
		if (round == -1)
		{
			ready = 0;
			for (int i = 0; i < n; i++)
				ready += cs[i].state == 2;
			if (ready == n)
			{
				printf("READY\n");
				fflush(stdout);
				round = 0;
			}
			continue;
		}
		ready = 0;
		for (int i = 0; i < n; i++)
			ready += cs[i].got > 0;
		if (ready == n)
		{
			for (int i = 0; i < n; i++)
			{
				printf("%s%lld", i ? " " : "", cs[i].at);
				cs[i].got--;
				cs[i].at = 0;
			}
			printf("\n");
			fflush(stdout);
			round++;
		}
	}
	return 0;
}
