COMMENT ON FUNCTION syncular.prune_segments(bigint) IS
'Forgets expired segments (SPEC §5.1, §5.5): deletes every publication whose expiry (ms since the Unix epoch) is at '
'or before now_ms (default: the clock), then every stored segment left without a publication. Returns '
'{"publications": n, "segments": m}. A forgotten segment answers 404 sync.not_found on download, which §5.5 makes '
'equivalent to sync.segment_expired for the client (re-pull). Owner-only; run it from the same scheduler as '
'syncular.prune. No errors of its own.';
