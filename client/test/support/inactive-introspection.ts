/** What introspection answers for a token that is not live: every field empty. */
export const INACTIVE_INTROSPECTION = {
  active: false,
  userId: "",
  tokenId: "",
  name: "",
  expiresAt: "",
  expiresAtMs: 0,
  scopes: [],
};
