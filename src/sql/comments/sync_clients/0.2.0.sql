COMMENT ON TABLE syncular.sync_clients IS
'Client records (SPEC §4.5): per (partition, client id) the bound actor, wire version, last cursor, subscriptions and time of the last round (a round that pushes only rewrites an unchanged record only when updated_at_ms is at least 1 s old). A client id bound to another actor is refused. View: syncular.clients.';
