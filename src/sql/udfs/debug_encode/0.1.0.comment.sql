COMMENT ON FUNCTION syncular.debug_encode(jsonb) IS
'Inverse of syncular.debug_render: encodes a rendering-shaped document ({"magic": "SSP2", "wireVersion", '
'"msgKind", "frames": [...]} or an SSG2 segment document) with the same field names; bytes as base64; '
'json-typed fields as JSON values (re-serialized compact, so bytes may differ from an original whose raw '
'JSON text had spaces). Raises sync.invalid_request naming the field for an invalid document, or the '
'codec''s code when the encoder refuses the value (e.g. grammar).';
