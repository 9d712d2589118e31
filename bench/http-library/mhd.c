/* experiment: libmicrohttpd 0.9.75 (Debian 12) under the gateway's torture inputs */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
struct req { size_t n; };
static enum MHD_Result
h(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *ver,
  const char *data, size_t *size, void **ptr)
{
	struct req *r = *ptr;
	char buf[128];
	struct MHD_Response *resp;
	enum MHD_Result ret;
	if (!r) { r = calloc(1, sizeof(*r)); *ptr = r; return MHD_YES; }
	if (*size) { r->n += *size; *size = 0; return MHD_YES; }
	snprintf(buf, sizeof buf, "{\"method\":\"%s\",\"url\":\"%s\",\"body\":%zu}", method, url, r->n);
	resp = MHD_create_response_from_buffer(strlen(buf), buf, MHD_RESPMEM_MUST_COPY);
	ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}
static void done(void *cls, struct MHD_Connection *c, void **ptr, enum MHD_RequestTerminationCode t) { free(*ptr); *ptr = NULL; }
int main(int argc, char **argv)
{
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, atoi(argv[1]), NULL, NULL, h, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
	if (!d) return 1;
	pause();
	return 0;
}
