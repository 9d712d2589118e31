-- The string member `field` of reaction record number idx: present, a JSON string, non-empty,
-- at most max_bytes of UTF-8; otherwise sync.storage.invalid_reaction naming the field.
CREATE FUNCTION syncular._reaction_text(idx integer, rec jsonb, field text, max_bytes integer)
RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v     jsonb := rec -> field;
  t     text;
  bytes integer;
BEGIN
  IF v IS NULL THEN PERFORM syncular._invalid_reaction(idx, field, 'missing'); END IF;
  IF jsonb_typeof(v) <> 'string' THEN PERFORM syncular._invalid_reaction(idx, field, 'not_string'); END IF;
  t := v #>> '{}';
  IF t = '' THEN PERFORM syncular._invalid_reaction(idx, field, 'empty'); END IF;
  bytes := octet_length(convert_to(t, 'UTF8'));
  IF bytes > max_bytes THEN
    PERFORM syncular._invalid_reaction(idx, field, 'too_long',
                                       jsonb_build_object('bytes', bytes, 'limit', max_bytes));
  END IF;
  RETURN t;
END
$$;
