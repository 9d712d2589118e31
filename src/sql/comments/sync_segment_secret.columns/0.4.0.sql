COMMENT ON COLUMN syncular.sync_segment_secret.id IS 'Singleton key: always 1.';
COMMENT ON COLUMN syncular.sync_segment_secret.key IS 'HMAC key signing segment and blob URLs (SPEC §5.4); never leaves the database.';
