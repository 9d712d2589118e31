-- syncular install script, part 70: durable reactions (§6.9; push-and-pull.md §2.8;
-- data-model-and-storage.md "sync_reactions", §8 "Reaction claim and prune"; docs/hooks.md).
--
-- Row life cycle (status):
--   pending --claim--> leased --complete--> completed
--                        |  \--fail (attempts < max_attempts, not permanent)--> pending (backoff)
--                        |  \--fail (attempts >= max_attempts or permanent)--> dead-letter
--                        \--lease expired--> claimable again (attempts counts every claim)
--   dead-letter --retry_dead_letter_reaction--> pending (attempts 0)
-- Invariant: lease_owner and lease_expires_at_ms are non-NULL exactly while status = 'leased'.
-- available_at_ms is the earliest claim time of a pending row and, for a dead-letter row, the
-- time it was dead-lettered (what sync_reactions_dead_letter indexes and prune_reactions ages).
-- Times are Unix epoch milliseconds.  Every function takes an optional trailing now_ms (NULL =
-- the engine's clock, syncular.now_ms()) so that callers and tests can pin time.
-- The worker functions (claim, renew, complete, fail) are SECURITY DEFINER so that an operator
-- can GRANT EXECUTE on them to a worker role without granting the catalog; like every routine
-- of the extension they are not executable by PUBLIC (90_grants).

-- The engine's clock (syncular.now_ms()) in epoch ms, or the pinned value.
--#include udfs/_reaction_now/0.4.0.sql
--#include udfs/_reaction_now/0.4.0.comment.sql

--#include udfs/_reaction_arg/0.1.0.sql
--#include udfs/_reaction_arg/0.1.0.comment.sql

--#include udfs/_invalid_reaction/0.1.0.sql
--#include udfs/_invalid_reaction/0.1.0.comment.sql

--#include udfs/_reaction_int/0.1.0.sql
--#include udfs/_reaction_int/0.1.0.comment.sql

--#include udfs/_reaction_text/0.1.0.sql
--#include udfs/_reaction_text/0.1.0.comment.sql

--#include udfs/_enqueue_reactions/0.1.0.sql
--#include udfs/_enqueue_reactions/0.1.0.comment.sql

--#include udfs/claim_reactions/0.1.0.sql
--#include udfs/claim_reactions/0.2.0.comment.sql

--#include udfs/renew_reaction_lease/0.1.0.sql
--#include udfs/renew_reaction_lease/0.2.0.comment.sql

--#include udfs/complete_reaction/0.1.0.sql
--#include udfs/complete_reaction/0.2.0.comment.sql

--#include udfs/fail_reaction/0.1.0.sql
--#include udfs/fail_reaction/0.2.0.comment.sql

--#include udfs/retry_dead_letter_reaction/0.1.0.sql
--#include udfs/retry_dead_letter_reaction/0.2.0.comment.sql

--#include udfs/prune_reactions/0.1.0.sql
--#include udfs/prune_reactions/0.2.0.comment.sql

--#include views/reactions/0.4.0.sql
--#include comments/reactions/0.4.0.sql
REVOKE ALL ON syncular.reactions FROM PUBLIC;
