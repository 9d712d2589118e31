/*
 * debug_render.h — the SPEC §11 canonical rendering as jsonb (debug_render.c), for
 * syncular.debug_render and the SQL pull producer (producer_pull.c).
 */
#ifndef SYNCULAR_DEBUG_RENDER_H
#define SYNCULAR_DEBUG_RENDER_H

#include "postgres.h"
#include "utils/jsonb.h"
#include "ssp.h"

/*
 * The rendering of an SSP2 message, or of an SSG2 rows segment (told by its magic), as
 * syncular.debug_render returns it.  Bytes that do not decode raise the decode error's catalogue
 * code; a value jsonb cannot hold raises sync.invalid_request with {"sqlstate": ...}.
 */
extern Jsonb *sync_render_jsonb(const uint8_t *data, size_t len);

/* One decoded frame's rendering {"type": ..., ...} (SPEC §11) of wire version `wire`. */
extern Jsonb *sync_render_frame_jsonb(uint16 wire, const SspFrame *frame);

#endif
