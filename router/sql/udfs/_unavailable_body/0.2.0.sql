-- The error body of handle_http, as the shard's sql_api.c writes it:
-- {code, category, retryable, recommendedAction, message, details?}.
CREATE FUNCTION syncular._unavailable_body() RETURNS bytea
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT convert_to('{"code":"sync.schema_not_ready","category":"internal","retryable":true,'
                    '"recommendedAction":"retryLater","message":"server schema is not ready for this request",'
                    '"details":{"shardUnavailable":true}}', 'UTF8')
$$;
