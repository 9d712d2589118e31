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
--#include indexes/sync_segment_publications_segment/0.2.0.sql
--#include indexes/sync_segment_publications_expiry/0.2.0.sql
--#include comments/sync_segment_publications/0.2.0.sql

--#include udfs/prune_segments/0.4.0.sql
--#include udfs/prune_segments/0.2.0.comment.sql

--#include udfs/segment_download/0.2.0.sql
--#include udfs/segment_download/0.2.0.comment.sql

--#include udfs/segments/0.2.0.sql
--#include udfs/segments/0.2.0.comment.sql

--#include tables/sync_segment_secret/0.2.0.sql
--#include rows/sync_segment_secret/0.2.0.sql
--#include grants/sync_segments/0.2.0.sql
--#include comments/sync_segment_secret/0.2.0.sql

--#include udfs/segment_url_download/0.2.0.sql
--#include udfs/segment_url_download/0.2.0.comment.sql
