COMMENT ON FUNCTION syncular.source_coverage_seq(text, text[]) IS
'RFC 0007 §3.2 sourceCoverageSeq. The highest commit_seq of a change of the partition to one of the listed tables '
'(synced table names; every change, wherever the log keeps it: the view syncular.changes); 0 when there is none or '
'the list is empty/NULL. A watermark for activate_checkpoint. Never raises.';
