COMMENT ON FUNCTION syncular.source_coverage_seq(text, text[]) IS
'RFC 0007 §3.2 sourceCoverageSeq. The highest commit_seq in sync_changes of the partition for the listed tables '
'(synced table names); 0 when there is none or the list is empty/NULL. A watermark for activate_checkpoint. '
'Never raises.';
