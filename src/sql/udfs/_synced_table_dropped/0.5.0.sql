CREATE FUNCTION syncular._synced_table_dropped() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce((SELECT t ->> 'name'
                     FROM pg_event_trigger_dropped_objects() d, syncular.sync_settings s,
                          jsonb_array_elements(s.compiled -> 'tables') t
                    WHERE s.id = 1
                      AND ((d.object_type = 'table' AND d.schema_name = s.app_schema
                            AND d.object_name = t ->> 'name')
                           OR (d.object_type = 'trigger' AND d.address_names[1] = s.app_schema
                               AND d.address_names[2] = t ->> 'name'
                               AND d.address_names[3] IN ('zz_syncular_capture', 'syncular_capture_insert',
                                   'syncular_capture_update', 'syncular_capture_delete',
                                   'syncular_capture_truncate')))
                    ORDER BY 1 LIMIT 1), '')
$$;
