COMMENT ON VIEW syncular.clients IS
  'Read-only. The client records (SPEC §4.5) plus behind_horizon: true when 0 <= cursor < the partition''s horizon_seq (its next pull resets with sync.cursor_expired).';
