COMMENT ON FUNCTION syncular.revoke_leases(text, text) IS
'Revokes every live auth lease of an actor in a partition (SPEC §7.3.4), as revoke_lease does for one. Returns how many were revoked. Owner only.';
