CREATE FUNCTION syncular._enqueue_reactions(partition text, client_id text, client_commit_id text,
                                            commit_seq bigint, records jsonb, now_ms bigint DEFAULT NULL)
RETURNS integer
LANGUAGE C SET search_path = pg_catalog, pg_temp AS 'MODULE_PATHNAME', 'syncular_enqueue_reactions';
