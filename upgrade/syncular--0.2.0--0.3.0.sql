-- syncular 0.2.0 -> 0.3.0 (ALTER EXTENSION syncular UPDATE TO '0.3.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.3.0'" to load this file. \quit

-- Nothing new is executable by PUBLIC (90_grants).  Keep this last.
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;
