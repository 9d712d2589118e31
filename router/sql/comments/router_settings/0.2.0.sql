COMMENT ON TABLE syncular.router_settings IS
'The router''s settings (a singleton row, id 1): authenticator, the function syncular.set_authenticator registered '
'in the router database.';
