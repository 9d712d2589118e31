COMMENT ON FUNCTION syncular._capture_bypass(boolean) IS
  'Internal. on = true: the capture triggers skip this backend''s writes until _capture_bypass(false), the end of the transaction, or the rollback of the subtransaction that set it; used by the schema bump''s row rewrite (engine writes are not captured twice). No grant: superuser / extension owner only. Raises nothing.';
