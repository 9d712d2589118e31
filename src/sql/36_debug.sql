-- syncular install script, part 36: debugging (src/debug_render.c, src/debug_encode.c).

CREATE FUNCTION syncular.debug_render(message bytea)
RETURNS jsonb LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'syncular_debug_render';
COMMENT ON FUNCTION syncular.debug_render(bytea) IS
'Canonical JSON rendering (SPEC §11) of an SSP2 request or response, or of an SSG2 rows segment (detected '
'by its magic). Bytes are base64, json-typed fields are parsed JSON values. Bytes that do not decode raise '
'the decode error''s catalogue code (sync.invalid_request, or sync.empty_commit) in DETAIL. A string (str field, '
'json-typed field, key) holding U+0000 or a lone UTF-16 surrogate, which jsonb cannot store, renders with its '
'escape kept as text: U+0000 reads back as the six characters \u0000 (its backslash escaped). A value jsonb '
'cannot hold at all (a number beyond numeric''s range) raises sync.invalid_request (SQLSTATE 22023) with details '
'{"sqlstate": <the jsonb_in SQLSTATE>}.';

CREATE FUNCTION syncular.debug_encode(doc jsonb)
RETURNS bytea LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE AS 'MODULE_PATHNAME', 'syncular_debug_encode';
COMMENT ON FUNCTION syncular.debug_encode(jsonb) IS
'Inverse of syncular.debug_render: encodes a rendering-shaped document ({"magic": "SSP2", "wireVersion", '
'"msgKind", "frames": [...]} or an SSG2 segment document) with the same field names; bytes as base64; '
'json-typed fields as JSON values (re-serialized compact, so bytes may differ from an original whose raw '
'JSON text had spaces). Raises sync.invalid_request naming the field for an invalid document, or the '
'codec''s code when the encoder refuses the value (e.g. grammar).';
