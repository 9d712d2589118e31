COMMENT ON TABLE syncular.sync_writer_fence IS
'RFC 0007 writer fence: the lowest writer version allowed to append commits to a partition (trigger sync_commits_writer_fence). Raised by checkpoint declarations and schema bumps.';
