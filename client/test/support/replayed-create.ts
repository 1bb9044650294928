// The answer the service gives to a replay of a create it accepted (issue #12, finding 1).
export const TOKEN_ID = "-AbCdEfGhIjKlMnO";
export const MESSAGE = `Signature already used: this request created token ${TOKEN_ID}`;
export const INFO = {
  reason: "TOKEN_ALREADY_CREATED",
  domain: "perps-tokens",
  metadata: { tokenId: TOKEN_ID },
};
