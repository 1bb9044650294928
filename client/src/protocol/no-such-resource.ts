/**
 * The message of the 404 (NOT_FOUND) a listener answers for a path it has no
 * route for. The CLI reads it as a URL of the other listener: REST's
 * `/user/tokens` is on the public listener only.
 */
export const NO_SUCH_RESOURCE = "no such resource";
