-- syncular 0.5.0 -> 0.6.0 (ALTER EXTENSION syncular UPDATE TO '0.6.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.6.0'" to load this file. \quit

--#include-or-replace udfs/_compile_schema/0.6.0.sql

--#include-or-replace udfs/_ensure_schema/0.6.0.sql
