CREATE SEQUENCE syncular.sync_blob_upload_seq;
