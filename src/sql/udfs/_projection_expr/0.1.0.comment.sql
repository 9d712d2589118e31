COMMENT ON FUNCTION syncular._projection_expr(text, text) IS
  'Internal. SQL expression computing the projection of one column from x.j, the jsonb produced by syncular.decode_row (bytes and crdt as base64, json as JSON values). Raises nothing.';
