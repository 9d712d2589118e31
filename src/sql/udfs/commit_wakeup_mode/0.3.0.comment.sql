COMMENT ON FUNCTION syncular.commit_wakeup_mode() IS
'How applied push commits of this session wake realtime gateways (SPEC §8.2; docs/realtime.md "Commit wake-ups"): '
'''notify'' (NOTIFY syncular_commit only), ''ring'' (the shared-memory ring read by syncular.wait_commits only) or '
'''both''. The setting syncular.commit_wakeup resolved against the preload: auto is ring with syncular in '
'shared_preload_libraries and notify without; ring and both are notify without the preload. A gateway asks it on '
'each database connection it takes wake-ups from. No arguments; never raises. Grant EXECUTE to the gateway role.';
