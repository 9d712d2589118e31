-- syncular_router install script, part 10: the calls routed to the shard of their partition.
--
-- Each public function has the signature of the syncular function of the same name and runs it
-- on one shard: PL/Proxy sends "select ... from syncular.<name>($1::type, ...)" to the logical
-- shard of hashtext(partition), in its own transaction there (autocommit; no two-phase commit
-- with the router's transaction).  The procedure syncular.sync is not routed (PL/Proxy calls
-- functions only); a routed handle() commits when its round ends, as a one-round procedure call.

--#include types/sync_reactions/0.2.0.sql
--#include comments/sync_reactions/0.2.0.sql

--#include udfs/_r_handle/0.2.0.sql
--#include udfs/_r_handle/0.2.0.comment.sql

--#include udfs/handle/0.2.0.sql
--#include udfs/handle/0.2.0.comment.sql

--#include udfs/_r_handle_http/0.2.0.sql
--#include udfs/_r_handle_http/0.2.0.comment.sql

--#include udfs/_handle_http/0.2.0.sql
--#include udfs/_handle_http/0.2.0.comment.sql

--#include udfs/handle_http/0.2.0.sql
--#include udfs/handle_http/0.2.0.comment.sql

--#include udfs/_r_push/0.2.0.sql
--#include udfs/push/0.2.0.sql
--#include udfs/_r_push/0.2.0.comment.sql
--#include udfs/push/0.2.0.comment.sql

--#include udfs/_r_pull/0.2.0.sql
--#include udfs/pull/0.2.0.sql
--#include udfs/_r_pull/0.2.0.comment.sql
--#include udfs/pull/0.2.0.comment.sql

--#include udfs/_r_serve_gate/0.2.0.sql
--#include udfs/serve_gate/0.2.0.sql
--#include udfs/_r_serve_gate/0.2.0.comment.sql
--#include udfs/serve_gate/0.2.0.comment.sql

--#include udfs/_r_declare_checkpoint/0.2.0.sql
--#include udfs/declare_checkpoint/0.2.0.sql
--#include udfs/_r_declare_checkpoint/0.2.0.comment.sql
--#include udfs/declare_checkpoint/0.2.0.comment.sql

--#include udfs/_r_claim_checkpoint/0.2.0.sql
--#include udfs/claim_checkpoint/0.2.0.sql
--#include udfs/_r_claim_checkpoint/0.2.0.comment.sql
--#include udfs/claim_checkpoint/0.2.0.comment.sql

--#include udfs/_r_advance_checkpoint/0.2.0.sql
--#include udfs/advance_checkpoint/0.2.0.sql
--#include udfs/_r_advance_checkpoint/0.2.0.comment.sql
--#include udfs/advance_checkpoint/0.2.0.comment.sql

--#include udfs/_r_activate_checkpoint/0.2.0.sql
--#include udfs/activate_checkpoint/0.2.0.sql
--#include udfs/_r_activate_checkpoint/0.2.0.comment.sql
--#include udfs/activate_checkpoint/0.2.0.comment.sql

--#include udfs/_r_checkpoints/0.2.0.sql
--#include udfs/checkpoints/0.2.0.sql
--#include udfs/_r_checkpoints/0.2.0.comment.sql
--#include udfs/checkpoints/0.2.0.comment.sql

--#include udfs/_r_source_coverage_seq/0.2.0.sql
--#include udfs/source_coverage_seq/0.2.0.sql
--#include udfs/_r_source_coverage_seq/0.2.0.comment.sql
--#include udfs/source_coverage_seq/0.2.0.comment.sql

--#include udfs/_r_prune/0.2.0.sql
--#include udfs/prune/0.2.0.sql
--#include udfs/_r_prune/0.2.0.comment.sql
--#include udfs/prune/0.2.0.comment.sql

--#include udfs/_r_rotate_log_epoch/0.2.0.sql
--#include udfs/rotate_log_epoch/0.2.0.sql
--#include udfs/_r_rotate_log_epoch/0.2.0.comment.sql
--#include udfs/rotate_log_epoch/0.2.0.comment.sql

--#include udfs/_r_claim_reactions/0.2.0.sql
--#include udfs/claim_reactions/0.2.0.sql
--#include udfs/_r_claim_reactions/0.2.0.comment.sql
--#include udfs/claim_reactions/0.2.0.comment.sql

--#include udfs/_r_renew_reaction_lease/0.2.0.sql
--#include udfs/renew_reaction_lease/0.2.0.sql
--#include udfs/_r_renew_reaction_lease/0.2.0.comment.sql
--#include udfs/renew_reaction_lease/0.2.0.comment.sql

--#include udfs/_r_complete_reaction/0.2.0.sql
--#include udfs/complete_reaction/0.2.0.sql
--#include udfs/_r_complete_reaction/0.2.0.comment.sql
--#include udfs/complete_reaction/0.2.0.comment.sql

--#include udfs/_r_fail_reaction/0.2.0.sql
--#include udfs/fail_reaction/0.2.0.sql
--#include udfs/_r_fail_reaction/0.2.0.comment.sql
--#include udfs/fail_reaction/0.2.0.comment.sql

--#include udfs/_r_retry_dead_letter_reaction/0.2.0.sql
--#include udfs/retry_dead_letter_reaction/0.2.0.sql
--#include udfs/_r_retry_dead_letter_reaction/0.2.0.comment.sql
--#include udfs/retry_dead_letter_reaction/0.2.0.comment.sql

--#include udfs/_r_prune_reactions/0.2.0.sql
--#include udfs/prune_reactions/0.2.0.sql
--#include udfs/_r_prune_reactions/0.2.0.comment.sql
--#include udfs/prune_reactions/0.2.0.comment.sql

