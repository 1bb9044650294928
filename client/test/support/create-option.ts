/** Fields whose option is not their kebab-case name: a list's option is repeated, one item each. */
const NAMED: Record<string, string> = { userId: "user", scopes: "scope", allowedIps: "allow-ip" };

/**
 * `create`'s option for a field of CreateTokenRequest, by its local name:
 * kebab case (expiresIn is --expires-in), except those NAMED.
 */
export function createOptionOf(localName: string): string {
  return NAMED[localName] ?? localName.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
