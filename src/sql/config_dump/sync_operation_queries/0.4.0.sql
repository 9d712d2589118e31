SELECT pg_catalog.pg_extension_config_dump('syncular.sync_operation_queries', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_operation_commands', '');
