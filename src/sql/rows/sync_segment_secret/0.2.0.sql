-- 244 random bits from two v4 UUIDs (pg_strong_random), hashed to a 32-byte key
INSERT INTO syncular.sync_segment_secret (id, key)
VALUES (1, sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())));
