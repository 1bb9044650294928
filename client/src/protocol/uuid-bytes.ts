// Any UUID text, in either case; which versions are valid ids is decided upstream.
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The 16 bytes of UUID text, from its hex digits (either case): what the
 * user's hash tag and bearer tokens carry. Throws for anything but UUID text.
 */
export function uuidBytes(uuid: string): Buffer {
  if (!UUID_TEXT.test(uuid)) {
    throw new Error("a user id must be UUID text");
  }
  return Buffer.from(uuid.replace(/-/g, ""), "hex");
}
