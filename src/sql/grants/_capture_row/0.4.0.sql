REVOKE ALL ON FUNCTION syncular._capture_row() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._capture_log() FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._capture_bypass(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._install_capture(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION syncular._drop_capture(text, text) FROM PUBLIC;
