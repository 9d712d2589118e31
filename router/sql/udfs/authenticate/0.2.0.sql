CREATE FUNCTION syncular.authenticate(method text, path text, headers jsonb, query jsonb)
RETURNS jsonb LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  fn regprocedure;
  answer jsonb;
BEGIN
  SELECT s.authenticator INTO fn FROM syncular.router_settings s WHERE s.id = 1;
  IF fn IS NULL THEN
    RETURN NULL;
  END IF;
  EXECUTE format('SELECT %s($1, $2, $3, $4)', fn::oid::regproc)
    INTO answer USING method, path, coalesce(headers, '{}'), coalesce(query, '{}');
  IF answer IS NULL OR jsonb_typeof(answer) = 'null' THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(answer) IS DISTINCT FROM 'object'
     OR jsonb_typeof(answer -> 'actorId') IS DISTINCT FROM 'string' OR answer ->> 'actorId' = ''
     OR jsonb_typeof(answer -> 'partition') IS DISTINCT FROM 'string' OR answer ->> 'partition' = '' THEN
    RAISE EXCEPTION 'the authenticator must answer {"actorId": text, "partition": text} or NULL'
      USING ERRCODE = 'XX000',
            DETAIL = jsonb_build_object('code', 'sync.internal_error', 'details',
                                        jsonb_build_object('authenticator', fn::text))::text;
  END IF;
  RETURN jsonb_build_object('actorId', answer ->> 'actorId', 'partition', answer ->> 'partition');
END
$$;
