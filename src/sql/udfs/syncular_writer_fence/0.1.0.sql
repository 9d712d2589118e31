-- Refuses a sync_commits insert whose writer_version is NULL or below the partition's fence.
-- The message text is the host code (reference behaviour); the SQLSTATE and JSON detail make it
-- a clear error for SQL callers (shared/reference/barrier-rfc0007.md, "Writer fence").  The DETAIL is
-- the catalogue form {"code": ..., "details": ...} (jsonb text, as syncular._raise writes it), so the
-- engine recognizes the refusal as this extension's own error.
CREATE FUNCTION syncular.syncular_writer_fence() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  required integer;
BEGIN
  SELECT f.required_writer_version INTO required
    FROM syncular.sync_writer_fence f WHERE f.partition = NEW.partition;
  IF FOUND AND (NEW.writer_version IS NULL OR NEW.writer_version < required) THEN
    RAISE EXCEPTION 'sync.storage.writer_fence_rejected'
      USING ERRCODE = 'P0001',
            DETAIL = jsonb_build_object('code', 'sync.storage.writer_fence_rejected',
                       'details', jsonb_build_object('partition', NEW.partition,
                         'writerVersion', NEW.writer_version,
                         'requiredWriterVersion', required))::text;
  END IF;
  RETURN NEW;
END
$$;
