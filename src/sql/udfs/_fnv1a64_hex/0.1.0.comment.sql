COMMENT ON FUNCTION syncular._fnv1a64_hex(text) IS
  'Internal. The FNV-1a-64 hash of the UTF-8 bytes of `name` as 16 lowercase hex digits. Raises nothing. data-model-and-storage.md §6 (physical index names).';
