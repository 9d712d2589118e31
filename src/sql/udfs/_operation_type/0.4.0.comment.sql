COMMENT ON FUNCTION syncular._operation_type(text) IS
'Internal. The PostgreSQL type of a declared param or column type: string text, integer bigint, float / number double precision, boolean, json jsonb, bytes bytea; NULL for another name.';
