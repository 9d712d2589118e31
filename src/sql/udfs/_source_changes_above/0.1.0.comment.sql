COMMENT ON FUNCTION syncular._source_changes_above(text, text[], bigint) IS
'Internal (RFC 0007 §3.3 hasSourceChangesAbove). ''clean'' for an empty table list; ''changed'' when sync_changes '
'holds a row of the partition for one of the tables with commit_seq > seq; otherwise ''unverifiable'' when the '
'partition''s horizon_seq (0 without a row) is > seq (a pruned window is never clean); otherwise ''clean''.';
