-- `sync_ix_<name>`, or `sync_ix_<16-hex FNV-1a-64 of name>` when that exceeds 63 bytes (§6).
CREATE FUNCTION syncular._physical_index_name(name text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN octet_length('sync_ix_' || name) > 63
              THEN 'sync_ix_' || syncular._fnv1a64_hex(name)
              ELSE 'sync_ix_' || name END
$$;
