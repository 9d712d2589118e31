CREATE TABLE syncular.router_settings (
  id            integer PRIMARY KEY CHECK (id = 1),
  authenticator regprocedure
);
