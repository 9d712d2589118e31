-- The registered app schema and its compiled form (see docs/compiled-schema.md), plus the hooks.
-- `compiled` is written only by ensure_schema; the C engine reads it once per schema change.
CREATE TABLE syncular.sync_settings (
  id                INTEGER PRIMARY KEY CHECK (id = 1),
  app_schema        TEXT,              -- NULL until ensure_schema registers the app schema
  compiled          JSONB,
  scope_resolver    REGPROCEDURE,
  commit_validator  REGPROCEDURE,
  reaction_planner  REGPROCEDURE
);
