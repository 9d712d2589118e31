REVOKE ALL ON syncular.sync_segments, syncular.sync_segment_publications, syncular.sync_segment_secret
  FROM PUBLIC;
