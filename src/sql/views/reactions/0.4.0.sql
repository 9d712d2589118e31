CREATE VIEW syncular.reactions AS
SELECT r.partition,
       r.idempotency_key,
       (r.idempotency_key::jsonb ->> 3) AS key,
       r.type, r.version, r.status, r.attempts, r.max_attempts,
       r.created_at_ms, r.available_at_ms,
       r.lease_owner, r.lease_expires_at_ms, r.completed_at_ms, r.last_failure,
       ((r.status = 'pending' AND r.available_at_ms <= n.ms)
         OR (r.status = 'leased' AND r.lease_expires_at_ms <= n.ms)) AS due,
       r.source_client_id, r.source_client_commit_id, r.source_commit_seq,
       r.payload
  FROM syncular.sync_reactions r,
       LATERAL (SELECT syncular.now_ms() AS ms) n;
