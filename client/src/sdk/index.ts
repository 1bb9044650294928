// The SDK's browser-safe entry: nothing on this import graph may import a
// Node.js built-in (client/test/sdk-browser.test.ts walks it). The gRPC transport
// is loaded lazily, and the Node-only extras live in ./node.ts.
export { Code } from "@connectrpc/connect";
export { durationText } from "../protocol/duration-text.js";
// What a create may ask for, checkable before signing (a form, a config file).
export {
  MAX_ALLOWED_IPS,
  parseIpPrefix,
} from "../protocol/ip-allow-list.js";
// `codeName`: the SDK's name for it since its first release.
export { grpcCodeName as codeName } from "../protocol/status-code.js";
export {
  ALLOW_LIST_SCOPE,
  DEFAULT_TOKEN_SCOPES,
  isTokenScope,
  TOKEN_SCOPES,
  type TokenScope,
} from "../protocol/token-scopes.js";
export type { PrivateKeySigner, SignCallback, Signer } from "./signer.js";
export { signerFromPem } from "./signer-from-pem.js";
export { TokenApiError, type TokenApiErrorOptions } from "./token-api-error.js";
export type { CreatedToken, TokenPage, TokenSummary } from "./token-calls.js";
export {
  type CreateTokenParams,
  createTokenClient,
  type DeleteTokenParams,
  type ListTokenPageOptions,
  type ListTokensOptions,
  type TokenClient,
  type TokenClientOptions,
  type TokenTransport,
} from "./token-client.js";
export { TransportUnavailableError } from "./transport-unavailable-error.js";
export {
  cryptoKeyFromPem,
  signerFromCryptoKey,
  type WebCryptoKey,
} from "./web-crypto-signer.js";
