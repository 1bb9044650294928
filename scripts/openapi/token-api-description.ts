import { TIMESTAMP_OUTSIDE_WINDOW } from "@perps/token-client/protocol";
import {
  DEFAULT_EXPIRES_IN_SECONDS,
  TIMESTAMP_TOLERANCE_MS,
} from "../../src/token/request-rules.js";
import { SIGNATURE_PATTERN } from "./token-api-constraints.js";

/*
 * The prose of the token API's OpenAPI document (Markdown): what the proto
 * cannot say about signing. Numbers come from the service's own constants.
 */

const toleranceMinutes = Number(TIMESTAMP_TOLERANCE_MS) / 60_000;

/** The document's `info.description`: the API, the signing scheme, typing and errors. */
export const tokenApiDescription = `Creates, deletes and lists bearer API tokens of a user of the perps trading platform.

Create and delete take a JSON body, DELETE included, and carry no \`Authorization\` header: each request is signed with the user's Ed25519 private key, whose public key an internal service registered for the user, and the \`signature\` in its body is what authenticates it (see Signing), so these operations declare no security scheme (\`security: []\`). Listing (\`GET /user/tokens\`) is authenticated by a live token of the user instead, sent as \`Authorization: Bearer <token>\` (security scheme \`bearerAuth\`).

## Signing

1. Build the text message of the operation:
   - create: \`createToken:<timestamp>:<expiresIn>:<name>:<userId>\`
   - delete: \`deleteToken:<timestamp>:<tokenId>:<userId>\`

   The data fields appear in alphabetical order of their keys. An omitted optional field leaves its slot empty and keeps the colons: \`createToken:<timestamp>:::<userId>\` when both \`expiresIn\` and \`name\` are omitted, even though \`expiresIn\` then defaults to ${DEFAULT_EXPIRES_IN_SECONDS}. Numbers are written as plain decimal integers (\`3600\`, never \`3600.0\` or \`3.6e3\`, even where the JSON body may carry those forms); \`userId\` exactly as sent (not re-cased).
2. Take its UTF-8 bytes and sign them with Ed25519 (pure Ed25519, no pre-hash).
3. Send the 64-byte signature as 128 lowercase hex characters, without \`0x\` (\`${SIGNATURE_PATTERN}\`), in \`signature\`.

The service checks, in this order, and the first failing rule decides:

1. **Shape** → 400: every field's type, pattern and range (all wrong fields are named, joined by \`; \`).
2. **Time window** → 401 \`Signature expired\`: \`timestamp\` (Unix milliseconds) is more than ${toleranceMinutes} minutes from server time. \`details\` then say which way the caller's clock is off and by how much, with the server's time: a \`google.rpc.ErrorInfo\` with \`reason\` \`${TIMESTAMP_OUTSIDE_WINDOW}\` and \`metadata\` \`serverTimeMs\` (Unix ms), \`offsetMs\` (timestamp − server time), \`clock\` (\`ahead\` or \`behind\`) and \`toleranceMs\`, and a \`google.rpc.LocalizedMessage\` saying the same in a sentence.
3. **Signature** → 401 \`Invalid signature\`: it does not verify under any key registered for the user. An unknown user, a user without keys and a wrong signature get the same answer.
4. **Replay** → 401 \`Signature already used\`: a signed request whose signature verified is remembered for the whole window, whatever its answer (201, 200, 404, 409, 429), and refused if it comes again: to retry a refused request, sign it again with a new timestamp. After a 503 the outcome is unknown and the same request may be sent again as it is. A create that was accepted and whose token is still live answers 409 instead, naming the token (see CreateToken), so a client whose answer was lost can delete it.
5. **Business rules**: a name held by a live token of the user → 409; a \`tokenId\` that does not exist, has expired or belongs to another user → 404.

## JSON typing

Integers (\`timestamp\`, \`expiresIn\`) must be JSON numbers that are integers within ±9007199254740991 (2^53−1): a string such as \`"1700000000000"\`, a fraction or \`1e400\` is a 400. Strings must be strings, and \`null\` is refused. Unknown fields are ignored. A required field left out is a 400 \`<field>: is required\`.

## Errors

Every error has the body \`{"code": <gRPC code>, "message": "...", "details": [...]}\` (schema \`google.rpc.Status\`), with the HTTP status that follows from the code. \`details\` is empty except where a client can act on more than the code (a replayed create, a timestamp outside the window); each detail is a protojson \`google.protobuf.Any\` (\`{"@type": "type.googleapis.com/google.rpc.ErrorInfo", ...}\`). 429 answers carry \`Retry-After\` (seconds).`;

/** Added to CreateToken's description. */
export const createTokenNotes = `Answers **201** with the new token, which is shown only this once.

Signed message: \`createToken:<timestamp>:<expiresIn>:<name>:<userId>\`, an omitted field leaving its slot empty:

| Omitted | Message |
|---|---|
| \`name\` | \`createToken:<timestamp>:<expiresIn>::<userId>\` |
| \`expiresIn\` | \`createToken:<timestamp>::<name>:<userId>\` |
| both | \`createToken:<timestamp>:::<userId>\` |`;

/** Added to ListTokens' description. */
export const listTokensNotes =
  'Answers **200** with `{"tokens": [...], "nextPageToken": "..."}`: one page, ordered by expiry (soonest first) then by name (UTF-8 bytes); `tokens` is present even when empty, and `nextPageToken` is left out on the last page. Send `nextPageToken` back as `pageToken` for the next page: a token live from the first page to the last is listed exactly once, whatever is created or deleted between pages. Any live token of the user authenticates the call, a session token included; session tokens are never listed. A token deleted or expired is refused at once, on every instance of the service. Each call counts against the user\'s list rate (TOKEN_LIST_RATE_LIMIT_PER_MINUTE, default 120 per minute), apart from create and delete\'s.';

/** Added to DeleteToken's description. */
export const deleteTokenNotes =
  "Answers **200** with `{}`.\n\nSigned message: `deleteToken:<timestamp>:<tokenId>:<userId>`.";
