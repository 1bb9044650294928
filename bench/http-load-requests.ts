/** What an HTTP/1.1 load sends and where: every load client of the bench takes these. */
export interface HttpLoadRequests {
  url: string;
  method: "POST" | "DELETE" | "GET";
  path: string;
  /** Pre-signed JSON bodies, each sent at most once, in turn. */
  bodies: readonly string[];
  /**
   * Instead of bodies: requests without a body, each with
   * `Authorization: Bearer <token>`, the tokens in turn (again from the
   * first when all have been sent).
   */
  bearerTokens?: readonly string[];
}
