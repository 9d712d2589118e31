-- syncular install script, part 45: the segment store (SPEC §5.1, §5.4, §5.5).
--
-- Segments are cache, not durable state (§5.1: "servers MAY expire them at any time"), so both
-- tables are UNLOGGED: building a segment writes no WAL, and after a crash PostgreSQL truncates
-- them.  A descriptor issued before the crash then answers 404 sync.not_found, which §5.5 makes
-- legal ("the expired→forgotten transition"), and the client's recovery is a re-pull.  Unlogged
-- tables are not replicated and cannot be read on a hot standby: a standby serves the rows lane
-- inline only (docs/segments.md).  The bytes column is STORAGE EXTERNAL: out of line without
-- pglz, which would spend CPU on every build for a payload the serving hop compresses per
-- response (§5.8) anyway.

--#include tables/sync_segments/0.2.0.sql
ALTER TABLE syncular.sync_segments ALTER COLUMN bytes SET STORAGE EXTERNAL;
--#include comments/sync_segments/0.2.0.sql

--#include tables/sync_segment_publications/0.2.0.sql
CREATE INDEX sync_segment_publications_segment ON syncular.sync_segment_publications (segment_id);
CREATE INDEX sync_segment_publications_expiry ON syncular.sync_segment_publications (expires_at_ms);
--#include comments/sync_segment_publications/0.2.0.sql

--#include udfs/prune_segments/0.4.0.sql
--#include udfs/prune_segments/0.2.0.comment.sql

--#include udfs/segment_download/0.2.0.sql
--#include udfs/segment_download/0.2.0.comment.sql

--#include udfs/segments/0.2.0.sql
--#include udfs/segments/0.2.0.comment.sql

--#include tables/sync_segment_secret/0.2.0.sql
-- 244 random bits from two v4 UUIDs (pg_strong_random), hashed to a 32-byte key
INSERT INTO syncular.sync_segment_secret (id, key)
VALUES (1, sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())));
REVOKE ALL ON syncular.sync_segments, syncular.sync_segment_publications, syncular.sync_segment_secret
  FROM PUBLIC;
--#include comments/sync_segment_secret/0.2.0.sql

--#include udfs/segment_url_download/0.2.0.sql
--#include udfs/segment_url_download/0.2.0.comment.sql
