CREATE FUNCTION syncular.register_command(operation_id text, authorize regprocedure, command regprocedure)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  old syncular.sync_operation_commands%ROWTYPE;
BEGIN
  IF operation_id IS NULL OR operation_id = '' THEN
    PERFORM syncular._operation_invalid(operation_id, 'the operation id must be a non-empty text', 'operation_id');
  END IF;
  IF authorize IS NULL OR command IS NULL THEN
    PERFORM syncular._operation_invalid(operation_id, 'a command needs an authorize function and a command function', 'authorize');
  END IF;
  PERFORM syncular._check_hook_signature('command_authorize', authorize,
    ARRAY['text', 'text', 'jsonb']::regtype[], 'boolean'::regtype, true,
    '(actor_id text, partition text, params jsonb) RETURNS boolean');
  PERFORM syncular._check_hook_signature('command', command,
    ARRAY['text', 'text', 'jsonb']::regtype[], 'jsonb'::regtype, true,
    '(actor_id text, partition text, params jsonb) RETURNS jsonb');
  IF EXISTS (SELECT 1 FROM syncular.sync_operation_queries q WHERE q.operation_id = register_command.operation_id) THEN
    PERFORM syncular._operation_invalid(operation_id, 'the id is already registered as a query', 'operation_id');
  END IF;
  SELECT * INTO old FROM syncular.sync_operation_commands c WHERE c.operation_id = register_command.operation_id;
  INSERT INTO syncular.sync_operation_commands AS c (operation_id, authorize, command)
  VALUES (operation_id, authorize, command)
  ON CONFLICT ON CONSTRAINT sync_operation_commands_pkey DO UPDATE
    SET authorize = EXCLUDED.authorize, command = EXCLUDED.command;
  RETURN jsonb_build_object('operationId', operation_id, 'kind', 'command',
    'action', CASE WHEN old.operation_id IS NULL THEN 'created'
                   WHEN (old.authorize, old.command) = (authorize, command) THEN 'unchanged'
                   ELSE 'updated' END);
END
$$;
