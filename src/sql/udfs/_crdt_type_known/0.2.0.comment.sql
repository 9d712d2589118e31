COMMENT ON FUNCTION syncular._crdt_type_known(text) IS
  'Internal. True when crdt_type has a merger: the built-in yjs-doc or a type registered in syncular.sync_crdt_mergers (SPEC §5.10.1: ensure_schema refuses any other). NULL for NULL; raises nothing.';
