COMMENT ON FUNCTION syncular.realtime_registration_cache() IS
'This backend''s cache of parsed realtime registrations (docs/realtime.md §2; SPEC §8.2): entries, the '
'registrations it holds (those realtime_connect answered on this connection, and those fanout calls passed), '
'and bytes, the memory allocated for them (kept within about syncular.realtime_registration_cache_kb plus one '
'call''s registrations; 0 entries when that setting is 0). Reads nothing but backend memory; no errors. '
'Owner-only until granted.';
