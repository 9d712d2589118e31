-- syncular install script, part 03: the clock seam and the fault seams (src/clock.c,
-- docs/testing-seams.md).  Both are testing and incident tools: the clock is moved with the
-- superuser-only settings syncular.clock_override_ms / syncular.clock_offset_ms, a fault is armed
-- with syncular.inject_fault, which only a superuser may call.

-- The engine's clock for the SQL and plpgsql paths (the C paths call the same function).
--#include udfs/now_ms/0.4.0.sql
--#include udfs/now_ms/0.4.0.comment.sql

-- Armed faults (one-shot): the next matching lookup of the engine consumes the row.
CREATE TABLE syncular.sync_faults (
  fault       TEXT COLLATE "C" NOT NULL,
  partition   TEXT COLLATE "C" NOT NULL,
  client_id   TEXT COLLATE "C" NOT NULL,
  armed_at_ms BIGINT NOT NULL,
  PRIMARY KEY (partition, client_id, fault)
);
REVOKE ALL ON syncular.sync_faults FROM PUBLIC;
--#include comments/sync_faults/0.4.0.sql

--#include udfs/inject_fault/0.4.0.sql
--#include udfs/inject_fault/0.4.0.comment.sql
