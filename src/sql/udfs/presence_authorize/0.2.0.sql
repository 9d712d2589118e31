CREATE FUNCTION syncular.presence_authorize(partition text, actor_id text, client_id text,
                                            scope_keys text[])
RETURNS text[] LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_presence_authorize';
