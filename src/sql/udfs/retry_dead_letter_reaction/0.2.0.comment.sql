COMMENT ON FUNCTION syncular.retry_dead_letter_reaction(text, text, bigint) IS
$$Operator action (SPEC §6.9, dead letters): a dead-letter row becomes pending again with attempts 0 and available_at_ms = now (claimable at once); last_failure is kept until the next failure. Returns true when a dead-letter row was moved, false otherwise (unknown key, or a row in another status: nothing changes).
now_ms = epoch ms (NULL = wall clock). Owner-only. Raises nothing of its own.$$;
