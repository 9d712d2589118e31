COMMENT ON FUNCTION syncular._validator_rejection(text, text, text) IS
$$Internal; the decoding rule the C push engine applies to an error raised by a row validator or the commit validator (push-and-pull.md §2.7; barrier-rfc0007.md §8.4; errors.md §3.1; docs/hooks.md).
Arguments: sqlstate = the error's SQLSTATE (5 characters), detail = its DETAIL text, message = its MESSAGE text (optional, used only as a fallback).
A hook rejects with: RAISE EXCEPTION '<message>' USING ERRCODE = 'SY001', DETAIL = '{"code": "app.quota", "message": "...", "details": {...}, "opIndex": n}'. SY001 is in the custom SQLSTATE class SY that this extension reserves for hook rejections. In DETAIL (a JSON object; other members are ignored):
  code     required, a non-empty JSON string that does not start with sync., blob., operation., presence. or client. (case-sensitive);
  message  optional string; when absent, null or empty the error MESSAGE is used, and when that is NULL or empty the code;
  details  optional object (null = absent) whose compact JSON is at most 4,096 UTF-8 bytes (the PUSH_RESULT_DETAILS bound); not checked further;
  opIndex  optional integer 0..2147483647 (null = absent); meaningful only for the commit validator (the engine ignores it for a row validator and checks it against the operation count).
Returns {"code", "message", "details"?, "opIndex"?} for a well-formed rejection, and NULL for anything else (another SQLSTATE, NULL or unparsable DETAIL, a non-object, a missing / empty / non-string / reserved code, a non-string message, non-object or oversized details, a bad opIndex): NULL means the engine answers sync.constraint_violation with the fixed message ("write validator failed" / "whole-commit validator failed"). Never raises.$$;
