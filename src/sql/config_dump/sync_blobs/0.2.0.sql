SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blobs', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blob_chunks', '');
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_blob_upload_seq', '');
