COMMENT ON FUNCTION syncular._physical_index_name(text) IS
  'Internal. Physical name of a declared index: sync_ix_<name>, or sync_ix_<16-hex FNV-1a-64 of name> when that exceeds 63 UTF-8 bytes. Raises nothing. data-model-and-storage.md §6.';
