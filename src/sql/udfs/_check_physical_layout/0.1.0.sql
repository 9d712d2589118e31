-- Hook: same-version physical-catalog check (barrier-rfc0007.md §6.2).  Filled by another issue
-- (CREATE OR REPLACE in a later part of the install script); today it checks nothing.
CREATE FUNCTION syncular._check_physical_layout(compiled jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN;  -- placeholder: sync.storage.physical_layout_mismatch checks go here
END
$$;
