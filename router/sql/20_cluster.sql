-- syncular_router install script, part 20: cluster-wide calls (every shard).
--
-- PL/Proxy runs a RUN ON ALL query on every shard in parallel, each in its own transaction, and
-- raises when any shard fails; there is no two-phase commit.  A call that changes the shards
-- (schema and hook registration) is therefore made in two rounds through the shard function
-- syncular.cluster_call: a check round (every shard runs the call and rolls it back) and, only
-- when every shard passed it, the apply round.  A shard that refuses, or that cannot be reached,
-- fails the check round and nothing is applied anywhere.  A shard lost between the two rounds
-- leaves the call applied on the others; these calls are idempotent, so the operator re-runs it.

--#include udfs/_r_cluster_call/0.2.0.sql
--#include udfs/_r_cluster_call/0.2.0.comment.sql

--#include udfs/_cluster/0.2.0.sql
--#include udfs/_cluster/0.2.0.comment.sql

--#include udfs/_shard_database/0.2.0.sql
--#include udfs/_shard_database/0.2.0.comment.sql

--#include udfs/_tag_checkpoints/0.2.0.sql
--#include udfs/_tag_checkpoints/0.2.0.comment.sql

--#include udfs/ensure_schema/0.2.0.sql
--#include udfs/ensure_schema/0.2.0.comment.sql

--#include udfs/set_scope_resolver/0.2.0.sql
--#include udfs/set_scope_resolver/0.2.0.comment.sql

--#include udfs/set_row_validator/0.2.0.sql
--#include udfs/set_row_validator/0.2.0.comment.sql

--#include udfs/set_commit_validator/0.2.0.sql
--#include udfs/set_commit_validator/0.2.0.comment.sql

--#include udfs/set_reaction_planner/0.2.0.sql
--#include udfs/set_reaction_planner/0.2.0.comment.sql

--#include udfs/_r_readiness/0.2.0.sql
--#include udfs/_r_readiness/0.2.0.comment.sql

--#include udfs/readiness/0.2.0.sql
--#include udfs/readiness/0.2.0.comment.sql
