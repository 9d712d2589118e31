-- Same-version stored-layout check (barrier-rfc0007.md §6.1).
CREATE FUNCTION syncular._verify_stored_layouts(compiled jsonb, stored jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t     jsonb;
  st    jsonb;
  c     jsonb;
  s     jsonb;
  n     integer;
  k     text;
  names text[] := '{}';
BEGIN
  FOR t IN SELECT value FROM jsonb_array_elements(compiled -> 'tables') WITH ORDINALITY ORDER BY ordinality LOOP
    names := names || (t ->> 'name');
    st := stored -> (t ->> 'name');
    IF st IS NULL OR jsonb_typeof(st) <> 'array' THEN
      st := '[]';
    END IF;
    n := greatest(jsonb_array_length(t -> 'columns'), jsonb_array_length(st));
    FOR i IN 0 .. n - 1 LOOP
      c := t -> 'columns' -> i;
      s := st -> i;
      IF NOT syncular._layout_entry_equal(c, s) THEN
        PERFORM syncular._raise('sync.storage.stored_layout_mismatch',
          'stored schema layouts disagree with the configured schema at the same version',
          jsonb_build_object('phase', 'storage_migration', 'table', t ->> 'name',
                             'column', coalesce(c ->> 'name', s ->> 'name', '')));
      END IF;
    END LOOP;
  END LOOP;
  FOR k IN SELECT key FROM jsonb_each(stored) ORDER BY key LOOP
    IF NOT (k = ANY (names)) THEN
      PERFORM syncular._raise('sync.storage.stored_layout_mismatch',
        'stored schema layouts disagree with the configured schema at the same version',
        jsonb_build_object('phase', 'storage_migration', 'table', k));
    END IF;
  END LOOP;
END
$$;
