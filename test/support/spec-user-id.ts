// The contract's userId rule, written independently of the proto's pattern so
// that tests can hold the validator and the OpenAPI document to it: version
// digit 1-8 and variant digit 8, 9, a or b, in either case; the nil and the
// all-f UUID are accepted as well.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const NIL = "00000000-0000-0000-0000-000000000000";
const MAX = "ffffffff-ffff-ffff-ffff-ffffffffffff";

/** True when `userId` is UUID text as the spec accepts it (hex digits in either case). */
export function isSpecUserId(userId: string): boolean {
  if (UUID.test(userId)) {
    return true;
  }
  const lower = userId.toLowerCase();
  return lower === NIL || lower === MAX;
}
