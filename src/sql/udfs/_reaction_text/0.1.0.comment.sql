COMMENT ON FUNCTION syncular._reaction_text(integer, jsonb, text, integer) IS
  'Internal. The string member field of reaction record idx (push-and-pull.md §2.8): present, a JSON string, non-empty, at most max_bytes UTF-8 bytes. Raises sync.storage.invalid_reaction (SQLSTATE 22023; details {index, field, reason (missing, not_string, empty, too_long), bytes?, limit?}) otherwise.';
