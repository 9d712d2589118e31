CREATE TRIGGER sync_commits_writer_fence BEFORE INSERT ON syncular.sync_commits
  FOR EACH ROW EXECUTE FUNCTION syncular.syncular_writer_fence();
