-- syncular install script, part 40: maintenance (push-and-pull.md §5, §1.2; data-model-and-storage.md §8).
--
-- prune() and rotate_log_epoch() take the partition lock first (syncular._partition_lock, as
-- every writer) and the sync_partition_registry row FOR UPDATE second (the one lock order of §8).  The views are
-- read-only conveniences over the catalog; like the catalog they are owner-only until granted.

--#include udfs/_partition_lock/0.7.0.sql
--#include udfs/_partition_lock/0.7.0.comment.sql

--#include udfs/_lock_partition/0.7.0.sql
--#include udfs/_lock_partition/0.7.0.comment.sql

--#include udfs/_retention_value/0.1.0.sql
--#include udfs/_retention_value/0.1.0.comment.sql

--#include udfs/prune/0.7.0.sql
--#include udfs/prune/0.7.0.comment.sql

--#include udfs/rotate_log_epoch/0.1.0.sql
--#include udfs/rotate_log_epoch/0.7.0.comment.sql

-- ---------------------------------------------------------------------------------------------
-- read-only views

--#include views/partitions/0.7.0.sql
--#include comments/partitions/0.7.0.sql

--#include views/clients/0.1.0.sql
--#include comments/clients/0.2.0.sql

--#include views/changes/0.7.0.sql
--#include comments/changes/0.7.0.sql

--#include views/commits/0.7.0.sql
--#include comments/commits/0.7.0.sql

--#include views/push_results/0.6.0.sql
--#include comments/push_results/0.6.0.sql
