/*
 * blobs.h — the blob store (SPEC §5.9; docs/blobs.md): the push-time existence check and the
 * size setting.  The SQL surface (upload, download) lives in blobs.c alone.
 */
#ifndef SYNCULAR_BLOBS_H
#define SYNCULAR_BLOBS_H

#include "engine.h"

extern int	sync_blob_max_bytes;		/* GUC syncular.blob_max_bytes */
extern char *sync_blob_url_base;		/* GUC syncular.blob_url_base */
extern int	sync_blob_url_ttl_s;		/* GUC syncular.blob_url_ttl */

extern void sync_blobs_define_gucs(void);

/*
 * §5.9.6: every non-NULL blob_ref value of `row` (ncolumns values of table t) names a blob stored
 * in the partition; each is locked FOR KEY SHARE until the transaction ends, so that blob_gc
 * cannot delete it under the commit.  false with *reject filled (blob.not_found) otherwise.
 * Needs an SPI connection.
 */
extern bool sync_blobs_check_row(const char *partition, const SyncTable *t, const SspValue *row,
								 int32 op_index, SyncOpReject *reject);

#endif							/* SYNCULAR_BLOBS_H */
