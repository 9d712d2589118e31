COMMENT ON FUNCTION syncular.checkpoints(text) IS
'RFC 0007 §3.2 readCheckpoints. Every checkpoint of the partition, any state, ordered by name (COLLATE "C"), '
'each as JSON {partition, name, schemaVersion, state, watermark, ownerEpoch, observedRows, updatedAtMs}. '
'Never raises.';
