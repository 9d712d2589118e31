CREATE PROCEDURE syncular.sync(request bytea, partition text, actor_id text,
                               INOUT response bytea DEFAULT NULL)
LANGUAGE C AS 'MODULE_PATHNAME', 'syncular_sync';
