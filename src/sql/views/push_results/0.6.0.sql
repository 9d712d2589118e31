CREATE VIEW syncular.push_results AS
SELECT c.partition, c.client_id, c.client_commit_id, c.result
  FROM syncular.sync_commits c
 WHERE c.result IS NOT NULL
UNION ALL
SELECT r.partition, r.client_id, r.client_commit_id, r.result
  FROM syncular.sync_push_results r;
