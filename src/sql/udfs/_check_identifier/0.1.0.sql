-- Identifier rules (§2.2): non-empty, at most 63 UTF-8 bytes, no `sync_` / `_sync` prefix.
CREATE FUNCTION syncular._check_identifier(name text, tbl text, col text, extra jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF name IS NULL OR name = '' THEN
    PERFORM syncular._schema_invalid('identifier is missing or empty', 'identifier_empty', tbl, col, extra);
  END IF;
  IF octet_length(name) > 63 THEN
    PERFORM syncular._schema_invalid('identifier is longer than 63 UTF-8 bytes', 'identifier_too_long',
                                     tbl, col, extra);
  END IF;
  IF starts_with(name, 'sync_') OR starts_with(name, '_sync') THEN
    PERFORM syncular._schema_invalid('identifier uses a reserved prefix (sync_ or _sync)',
                                     'identifier_reserved', tbl, col, extra);
  END IF;
END
$$;
