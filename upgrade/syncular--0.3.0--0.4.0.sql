-- syncular 0.3.0 -> 0.4.0 (ALTER EXTENSION syncular UPDATE TO '0.4.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.4.0'" to load this file. \quit

-- an unknown column type names the valid ones (HINT)
CREATE OR REPLACE FUNCTION syncular._schema_invalid(message text, rule text, tbl text DEFAULT NULL,
                                         col text DEFAULT NULL, extra jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM syncular._raise('sync.storage.schema_invalid', message,
            jsonb_strip_nulls(jsonb_build_object('table', tbl, 'column', col))
            || coalesce(extra, '{}'::jsonb)
            || jsonb_build_object('rule', rule),
            CASE rule WHEN 'column_type' THEN
              'A column "type" is one of: string, integer, float, boolean, json, bytes, blob_ref, crdt.'
            END);
END
$$;
COMMENT ON FUNCTION syncular._schema_invalid(text, text, text, text, jsonb) IS
  'Internal. Always raises sync.storage.schema_invalid (SQLSTATE 22023) with the fixed `message` and details {table?, column?, ...extra, rule}; rule column_type adds a HINT listing the valid column types. data-model-and-storage.md §2.';
