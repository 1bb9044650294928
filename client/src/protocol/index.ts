// What the service and its clients must agree on byte for byte: the signed
// messages, the token format and checksum, the error reasons, the codes' names
// and HTTP statuses. The service imports this entry
// (`@perps/token-client/protocol`) and, of the client package, only the
// contract's generated code besides; the SDK and the CLI import the same modules.

export { durationText } from "./duration-text.js";
export {
  ERROR_DOMAIN,
  ERROR_INFO_TYPE_URL,
  TIMESTAMP_OUTSIDE_WINDOW,
  TOKEN_ALREADY_CREATED,
} from "./error-reason.js";
export {
  connectCodeFromHttpStatus,
  httpStatusFromCode,
  restCodeFromHttpStatus,
} from "./http-status.js";
export {
  allowListContains,
  type IpPrefix,
  MAX_ALLOWED_IPS,
  parseIpAddress,
  parseIpPrefix,
  prefixContains,
} from "./ip-allow-list.js";
export { NO_SUCH_RESOURCE } from "./no-such-resource.js";
export { randomInto, randomText } from "./random-text.js";
export {
  type CreateTokenMessageFields,
  createTokenMessage,
  type DeleteTokenMessageFields,
  deleteTokenMessage,
} from "./signed-message.js";
export { connectCodeName, grpcCodeName, isErrorCode } from "./status-code.js";
export {
  ALLOW_LIST_SCOPE,
  DEFAULT_SCOPE_MASK,
  DEFAULT_TOKEN_SCOPES,
  isTokenScope,
  scopeMask,
  scopesOfMask,
  TOKEN_SCOPES,
  type TokenScope,
} from "./token-scopes.js";
export {
  generateToken,
  isWellFormedToken,
  type ParsedToken,
  parseToken,
  TOKEN_DIGEST_BYTES,
  TOKEN_LENGTH,
  TOKEN_PREFIX,
  tokenDigest,
  tokenIdOf,
} from "./token-secret.js";
export { uuidBytes } from "./uuid-bytes.js";
