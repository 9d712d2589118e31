CREATE FUNCTION syncular._checkpoint_args(partition text, name text)
RETURNS void LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF _checkpoint_args.partition IS NULL OR _checkpoint_args.partition = '' THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a non-empty partition and name',
      jsonb_build_object('field', 'partition'));
  END IF;
  IF _checkpoint_args.name IS NULL OR _checkpoint_args.name = '' THEN
    PERFORM syncular._raise('sync.storage.invalid_checkpoints',
      'a backfill checkpoint needs a non-empty partition and name',
      jsonb_build_object('field', 'name'));
  END IF;
END
$$;
