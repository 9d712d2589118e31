/*
 * image.h — SQLite image segments (SPEC §5.3), image.c.
 */
#ifndef SYNCULAR_IMAGE_H
#define SYNCULAR_IMAGE_H

#include "engine.h"

typedef struct SyncImage SyncImage;

/* An empty image of table t (data table created, insert prepared). */
extern SyncImage *sync_image_begin(const SyncTable *t);
/* One row: its server_version and full-row codec payload (§2.4). */
extern void sync_image_add_row(SyncImage *img, int64 server_version, const uint8 *payload, size_t len);
extern int64 sync_image_rows(const SyncImage *img);
/* Write _syncular_segment, commit, and return the file's bytes (palloc'd) in *len. */
extern uint8 *sync_image_finish(SyncImage *img, int32 schema_version, int64 as_of,
								const char *scope_digest, size_t *len);
/* Free the image (after finish, or instead of it). */
extern void sync_image_discard(SyncImage *img);

#endif							/* SYNCULAR_IMAGE_H */
