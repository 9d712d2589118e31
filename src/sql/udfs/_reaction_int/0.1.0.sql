-- A JSON number that is an integer in lo..hi, or NULL.
CREATE FUNCTION syncular._reaction_int(v jsonb, lo bigint, hi bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN jsonb_typeof(v) = 'number'
                   AND (v #>> '{}')::numeric = trunc((v #>> '{}')::numeric)
                   AND (v #>> '{}')::numeric BETWEEN lo AND hi
              THEN (v #>> '{}')::numeric::bigint END
$$;
