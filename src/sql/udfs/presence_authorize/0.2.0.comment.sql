COMMENT ON FUNCTION syncular.presence_authorize(text, text, text, text[]) IS
'Presence authorization (SPEC §8.6.3; docs/realtime.md §4): the subset of scope_keys ("prefix:value", input order, '
'NULLs and duplicates dropped) the client is registered on under its current grant, i.e. in the scopeKeys '
'realtime_connect would return now. Arguments and errors as realtime_connect, plus sync.invalid_request (22023) for '
'a NULL or multi-dimensional scope_keys. SECURITY DEFINER like syncular.handle.';
