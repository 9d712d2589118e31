-- The stored-layout check against the marker as it is now (used by syncular.readiness).
CREATE FUNCTION syncular._check_stored_layout(compiled jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._verify_stored_layouts(compiled,
            syncular._parse_layouts((SELECT m.layouts FROM syncular.sync_schema_meta m WHERE m.id = 1)));
END
$$;
