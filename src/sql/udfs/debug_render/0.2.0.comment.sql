COMMENT ON FUNCTION syncular.debug_render(bytea) IS
'Canonical JSON rendering (SPEC §11) of an SSP2 request or response, or of an SSG2 rows segment (detected '
'by its magic). Bytes are base64, json-typed fields are parsed JSON values. Bytes that do not decode raise '
'the decode error''s catalogue code (sync.invalid_request, or sync.empty_commit) in DETAIL. A string (str field, '
'json-typed field, key) holding U+0000 or a lone UTF-16 surrogate, which jsonb cannot store, renders with its '
'escape kept as text: U+0000 reads back as the six characters \u0000 (its backslash escaped). A value jsonb '
'cannot hold at all (a number beyond numeric''s range) raises sync.invalid_request (SQLSTATE 22023) with details '
'{"sqlstate": <the jsonb_in SQLSTATE>}.';
