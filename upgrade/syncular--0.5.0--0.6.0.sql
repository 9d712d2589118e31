-- syncular 0.5.0 -> 0.6.0 (ALTER EXTENSION syncular UPDATE TO '0.6.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.6.0'" to load this file. \quit

-- The two hook rules of the round path in C (src/hook_records.c): the validator rejection
-- decoding and the reaction records' checks and enqueue; the PL/pgSQL helpers only they used go.
--#include-or-replace udfs/_validator_rejection/0.6.0.sql
--#include-or-replace udfs/_enqueue_reactions/0.6.0.sql
--#include udfs/_enqueue_reactions/0.6.0.comment.sql
DROP FUNCTION syncular._reaction_text(integer, jsonb, text, integer);
DROP FUNCTION syncular._reaction_int(jsonb, bigint, bigint);
DROP FUNCTION syncular._invalid_reaction(integer, text, text, jsonb);

-- The schema compiler and ensure_schema in C (src/schema_compile.c, src/schema_ensure.c).
--#include-or-replace udfs/_compile_schema/0.6.0.sql
--#include-or-replace udfs/_ensure_schema/0.6.0.sql
DROP FUNCTION syncular._check_identifier(text, text, text, jsonb);
DROP FUNCTION syncular._schema_invalid(text, text, text, text, jsonb);
