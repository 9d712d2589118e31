-- Raises sync.storage.schema_invalid with details {table?, column?, <extra>..., rule}.
CREATE FUNCTION syncular._schema_invalid(message text, rule text, tbl text DEFAULT NULL,
                                         col text DEFAULT NULL, extra jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._raise('sync.storage.schema_invalid', message,
            jsonb_strip_nulls(jsonb_build_object('table', tbl, 'column', col))
            || coalesce(extra, '{}'::jsonb)
            || jsonb_build_object('rule', rule));
END
$$;
