/* experiment: does wslay's server event API refuse an unmasked client frame (RFC 6455 5.1)? */
#include <wslay/wslay.h>
#include <stdio.h>
#include <string.h>
static const uint8_t *in; static size_t inlen;
static uint8_t out[256]; static size_t outlen;
static ssize_t rcb(wslay_event_context_ptr c, uint8_t *buf, size_t len, int flags, void *u)
{ if (!inlen) { wslay_event_set_error(c, WSLAY_ERR_WOULDBLOCK); return -1; }
  if (len > inlen) len = inlen; memcpy(buf, in, len); in += len; inlen -= len; return (ssize_t) len; }
static ssize_t scb(wslay_event_context_ptr c, const uint8_t *d, size_t len, int flags, void *u)
{ memcpy(out + outlen, d, len); outlen += len; return (ssize_t) len; }
static int got;
static void mcb(wslay_event_context_ptr c, const struct wslay_event_on_msg_recv_arg *a, void *u) { got++; }
int main(void)
{
	struct wslay_event_callbacks cb = {rcb, scb, NULL, NULL, NULL, NULL, mcb};
	wslay_event_context_ptr c;
	static const uint8_t unmasked[] = {0x81, 0x03, 'a', 'b', 'c'};
	static const uint8_t masked[] = {0x81, 0x83, 0, 0, 0, 0, 'a', 'b', 'c'};
	for (int k = 0; k < 2; k++) {
		wslay_event_context_server_init(&c, &cb, NULL);
		in = k ? masked : unmasked; inlen = k ? sizeof masked : sizeof unmasked; outlen = 0; got = 0;
		int r = wslay_event_recv(c);
		wslay_event_send(c);
		printf("%s frame: recv %d, messages %d, close sent %s, status %u\n", k ? "masked" : "unmasked", r, got,
		       outlen >= 4 && (out[0] & 0x0f) == 8 ? "yes" : "no", outlen >= 4 ? (unsigned) (out[2] << 8 | out[3]) : 0);
		wslay_event_context_free(c);
	}
	return 0;
}
