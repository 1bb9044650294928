import type { TokenIntrospection } from "../sdk/introspection-client.js";

/**
 * `introspect`'s answer for people: one `field value` line each, or one line
 * saying the token is not live (the service does not say why: no oracle).
 */
export function introspectionText(answer: TokenIntrospection): string {
  if (!answer.active) {
    return "active    no (not a live token: malformed, unknown, expired or deleted)";
  }
  const expires = new Date(answer.expiresAtMs).toISOString();
  return [
    "active    yes",
    `user      ${answer.userId}`,
    `token id  ${answer.tokenId}`,
    `name      ${answer.name === "" ? "(none: a session token)" : answer.name}`,
    `expires   ${expires} (Unix ms ${answer.expiresAtMs})`,
    `scopes    ${answer.scopes.join(",")}`,
  ].join("\n");
}
