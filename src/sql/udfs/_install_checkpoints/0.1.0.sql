-- Hook: install declared checkpoints and raise the writer fence after a bump (RFC 0007).
CREATE FUNCTION syncular._install_checkpoints(checkpoints jsonb, version integer)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN;  -- placeholder: filled by the writer-fence / checkpoint issue
END
$$;
