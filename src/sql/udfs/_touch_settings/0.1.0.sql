-- Touches the settings singleton so that every backend's compiled-schema cache reloads.
CREATE FUNCTION syncular._touch_settings() RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  INSERT INTO syncular.sync_settings AS s (id) VALUES (1)
    ON CONFLICT (id) DO UPDATE SET id = s.id;
$$;
