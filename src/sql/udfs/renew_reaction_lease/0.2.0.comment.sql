COMMENT ON FUNCTION syncular.renew_reaction_lease(text, text, text, bigint, bigint) IS
$$Extends a worker's lease (SPEC §6.9): when the row is leased and lease_owner = owner, sets lease_expires_at_ms = now + lease_ms and returns true; otherwise (another owner reclaimed it, it was completed, failed or dead-lettered, or it does not exist) changes nothing and returns false. A lease that expired but was not reclaimed yet is still the owner's and can be renewed.
Arguments: lease_ms 1..2^53-1 ms (default 30,000); now_ms = epoch ms (NULL = wall clock). SECURITY DEFINER; grant EXECUTE to a worker role.
Errors: sync.storage.invalid_limit (SQLSTATE 22023; details {argument, value, min, max}) for lease_ms.$$;
