COMMENT ON FUNCTION syncular.segments(text) IS
'The stored segment publications (SPEC §5.1) of one partition (NULL: every partition): descriptor fields, sizes and '
'expiry in ms since the Unix epoch. For operators and tests; owner-only. No errors.';
