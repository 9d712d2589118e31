CREATE VIEW syncular.stats_tables AS
SELECT s.dbid, d.datname, s.table_name,
       s.push_operations, s.push_conflicts, s.push_rejected,
       s.pull_sections_incremental, s.pull_sections_bootstrap, s.pull_sections_reset, s.pull_sections_revoked,
       s.pull_commits_served, s.pull_changes_served, s.pull_rows_served
  FROM syncular._stats_tables() s
  LEFT JOIN pg_catalog.pg_database d ON d.oid = s.dbid;
