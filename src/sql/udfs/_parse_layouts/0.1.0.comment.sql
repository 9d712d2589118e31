COMMENT ON FUNCTION syncular._parse_layouts(text) IS
  'Internal. Stored sync_schema_meta.layouts text as a jsonb object; unparseable or non-object text counts as {} (barrier-rfc0007.md §6.1 step 1). Raises nothing.';
