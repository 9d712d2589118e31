-- syncular install script, part 25: write-path hooks (DESIGN.md decision 7; push-and-pull.md §2.7,
-- §2.8; barrier-rfc0007.md §8; docs/hooks.md).
--
-- Row validators (§6.7) live in syncular.sync_row_validators (one per synced table); the commit
-- validator (§6.8) and the reaction planner (§6.9) in syncular.sync_settings.  Every registration
-- also rewrites the sync_settings row so that the C engine's per-backend cache (keyed by that row's
-- xmin/ctid, src/schema.c) reloads.  _validator_rejection is the one decoding rule that turns an
-- error raised by a hook into a push rejection.

--#include udfs/_compact_json/0.1.0.sql
--#include udfs/_compact_json/0.1.0.comment.sql

--#include udfs/_touch_settings/0.1.0.sql
--#include udfs/_touch_settings/0.1.0.comment.sql

--#include udfs/set_row_validator/0.1.0.sql
--#include udfs/set_row_validator/0.2.0.comment.sql

--#include udfs/set_commit_validator/0.1.0.sql
--#include udfs/set_commit_validator/0.2.0.comment.sql

--#include udfs/set_reaction_planner/0.1.0.sql
--#include udfs/set_reaction_planner/0.2.0.comment.sql

--#include udfs/_validator_rejection/0.1.0.sql
--#include udfs/_validator_rejection/0.1.0.comment.sql
