/**
 * `create`'s option for a field of CreateTokenRequest, by its local name:
 * kebab case (expiresIn is --expires-in), except userId, which is --user.
 */
export function createOptionOf(localName: string): string {
  return localName === "userId"
    ? "user"
    : localName.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
