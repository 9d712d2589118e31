/* placeholder, replaced below */
#include "gateway.h"
#include <libwebsockets.h>
size_t gw_ws_sess_size(void);
size_t gw_ws_sess_size(void) { return 64; }
int gw_ws_callback(struct lws *wsi, int reason, void *user, void *in, size_t len)
{ (void) wsi; (void) user; (void) in; (void) len; return reason == LWS_CALLBACK_HTTP_CONFIRM_UPGRADE ? -1 : 0; }
void gw_ws_init(struct lws_context *ctx) { (void) ctx; }
void gw_ws_drain(void) {}
int gw_ws_count(void) { return 0; }
