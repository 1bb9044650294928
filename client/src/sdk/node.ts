// The SDK's Node.js entry: everything of the browser entry, plus helpers that
// need Node built-ins. isWellFormedToken is re-exported rather than rewritten
// for browsers so that the token format has one definition (it uses
// node:zlib's crc32); checking tokens for leaks is a server-side or CI job.
// IntrospectToken is for internal services, which run on the server: it is
// offered here only.

export { isWellFormedToken, TOKEN_PREFIX } from "../protocol/token-secret.js";
export * from "./index.js";
export {
  createIntrospectionClient,
  type IntrospectionClient,
  type IntrospectionClientOptions,
  type IntrospectionTransport,
  type IntrospectTokenOptions,
  type TokenIntrospection,
} from "./introspection-client.js";
