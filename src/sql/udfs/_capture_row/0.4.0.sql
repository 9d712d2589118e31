-- A role that may write the synced table needs no privilege on the sync_* tables: the log is
-- written by the SECURITY DEFINER statement trigger as the extension owner (the actor defaults
-- to the session's role); the row trigger reads the settings once per statement as the owner of
-- its function, without switching roles for every row.
CREATE FUNCTION syncular._capture_row() RETURNS trigger
  AS 'MODULE_PATHNAME', 'syncular_capture_row' LANGUAGE C;
