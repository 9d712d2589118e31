CREATE TABLE syncular.sync_operation_commands (
  operation_id  TEXT PRIMARY KEY CHECK (operation_id <> ''),
  authorize     REGPROCEDURE NOT NULL,
  command       REGPROCEDURE NOT NULL
);
