import {
  CreateTokenRequestSchema,
  CreateTokenResponseSchema,
  DeleteTokenRequestSchema,
  TokenSummarySchema,
} from "../gen/perps/token/v1/token_pb.js";
import { TOKEN_PREFIX } from "../protocol/token-secret.js";
import {
  DEFAULT_EXPIRES_IN_SECONDS,
  MAX_NAME_LENGTH,
  MAX_TOKEN_ID_LENGTH,
  TIMESTAMP_TOLERANCE_MS,
} from "../token/request-rules.js";
import type { JsonSchema } from "./openapi-document.js";

/*
 * The field rules of the token service that the proto cannot carry, as JSON
 * Schema keywords for the OpenAPI document, keyed by full name. Limits come
 * from the constants of src/token/request-rules.ts; the patterns restate
 * regular expressions that module keeps private, and
 * test/unit/openapi/token-api-constraints.test.ts checks each one against
 * the service's own checks, so the document cannot drift from them.
 */

/** `^[0-9a-f]{128}$`: the Ed25519 signature, 64 bytes in lowercase hex, no `0x`. */
export const SIGNATURE_PATTERN = "^[0-9a-f]{128}$";

const hex = "[0-9a-fA-F]";
/**
 * A UUID as src/token/user-id.ts accepts it: hex digits in either case,
 * version digit 1-8, variant digit 8, 9, a or b; or the nil or the all-f UUID.
 * (JSON Schema patterns have no flags, so the case-insensitivity is spelled out.)
 */
export const USER_ID_PATTERN =
  `^(?:${hex}{8}-${hex}{4}-[1-8]${hex}{3}-[89abAB]${hex}{3}-${hex}{12}` +
  "|00000000-0000-0000-0000-000000000000" +
  "|[fF]{8}-[fF]{4}-[fF]{4}-[fF]{4}-[fF]{12})$";

/**
 * No C0 or C1 control character and no DEL, like the name rule of
 * src/token/request-rules.ts. (Its refusal of unpaired surrogates is left to
 * the description: a pattern with `\uD800-\uDFFF` would refuse every emoji
 * in the engines that match without the `u` flag.)
 */
export const NAME_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$";

/**
 * The shape of a bearer token: `pt_`, 80 base64url characters (60 bytes: the
 * user's UUID, the token id, 256 random bits), a 6-character base62 checksum.
 */
export const TOKEN_PATTERN = `^${TOKEN_PREFIX}[A-Za-z0-9_-]{80}[0-9A-Za-z]{6}$`;

const toleranceMinutes = Number(TIMESTAMP_TOLERANCE_MS) / 60_000;

const signature: JsonSchema = {
  pattern: SIGNATURE_PATTERN,
  minLength: 128,
  maxLength: 128,
  examples: ["3f".repeat(64)],
};

const timestamp: JsonSchema = {
  description: `Unix time in milliseconds. Must be within ±${toleranceMinutes} minutes of server time, otherwise the answer is 401 \`Signature expired\`.`,
  examples: [1_763_726_400_000],
};

const userId: JsonSchema = {
  format: "uuid",
  pattern: USER_ID_PATTERN,
  description:
    "UUID of the user: hex digits in either case, version digit 1-8, variant digit 8, 9, a or b (or the nil or the all-f UUID). Sent and signed verbatim: do not re-case it.",
  examples: ["0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab"],
};

/** The token API's constraints, for `createOpenApiDocument({ constraints })`. */
export const tokenApiConstraints: Readonly<Record<string, JsonSchema>> = {
  [`${CreateTokenRequestSchema.typeName}.signature`]: signature,
  [`${CreateTokenRequestSchema.typeName}.timestamp`]: timestamp,
  [`${CreateTokenRequestSchema.typeName}.user_id`]: userId,
  [`${CreateTokenRequestSchema.typeName}.expires_in`]: {
    minimum: 1,
    default: DEFAULT_EXPIRES_IN_SECONDS,
    description: `Lifetime of the token in seconds: at least 1, at most the service's TOKEN_MAX_LIFETIME_SECONDS (default 31536000, 365 days). Omitted: ${DEFAULT_EXPIRES_IN_SECONDS} (7 days), and the signed message keeps its slot empty. Above ${DEFAULT_EXPIRES_IN_SECONDS}, \`name\` is required.`,
    examples: [3600],
  },
  [`${CreateTokenRequestSchema.typeName}.name`]: {
    minLength: 1,
    maxLength: MAX_NAME_LENGTH,
    pattern: NAME_PATTERN,
    description: `Unique among the user's live tokens; a token without a name is a session token. 1 to ${MAX_NAME_LENGTH} characters (Unicode code points), case-sensitive, no control characters and no unpaired surrogates.`,
    examples: ["my-bot"],
  },
  // Above the default lifetime a token must be named.
  [CreateTokenRequestSchema.typeName]: {
    if: {
      required: ["expiresIn"],
      properties: { expiresIn: { type: "integer", exclusiveMinimum: DEFAULT_EXPIRES_IN_SECONDS } },
    },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited.
    then: { required: ["name"] },
  },
  [`${DeleteTokenRequestSchema.typeName}.signature`]: signature,
  [`${DeleteTokenRequestSchema.typeName}.timestamp`]: timestamp,
  [`${DeleteTokenRequestSchema.typeName}.user_id`]: userId,
  [`${DeleteTokenRequestSchema.typeName}.token_id`]: {
    minLength: 1,
    maxLength: MAX_TOKEN_ID_LENGTH,
    description: `The \`id\` the create answered (1 to ${MAX_TOKEN_ID_LENGTH} characters, no unpaired surrogates).`,
    examples: ["YAnc9iX83Ws3U0fLFuOMmw"],
  },
  // The service always sends all three.
  [CreateTokenResponseSchema.typeName]: { required: ["expiresAt", "id", "token"] },
  [`${CreateTokenResponseSchema.typeName}.expires_at`]: {
    format: "date",
    pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    description:
      "UTC calendar date (YYYY-MM-DD) of the moment the token expires: server time plus its lifetime.",
    examples: ["2026-11-21"],
  },
  [`${CreateTokenResponseSchema.typeName}.id`]: {
    minLength: 1,
    maxLength: MAX_TOKEN_ID_LENGTH,
    description: "Token identifier (opaque), the `tokenId` of a delete.",
    examples: ["YAnc9iX83Ws3U0fLFuOMmw"],
  },
  // Every listed token has all three.
  [TokenSummarySchema.typeName]: { required: ["id", "name", "expiresAt"] },
  [`${TokenSummarySchema.typeName}.expires_at`]: {
    format: "date",
    pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    description:
      "UTC calendar date (YYYY-MM-DD) of the moment the token expires, as CreateToken answered it.",
    examples: ["2026-11-21"],
  },
  [`${TokenSummarySchema.typeName}.id`]: {
    minLength: 1,
    maxLength: MAX_TOKEN_ID_LENGTH,
    description: "Token identifier (opaque), the `tokenId` of a delete.",
    examples: ["YAnc9iX83Ws3U0fLFuOMmw"],
  },
  [`${TokenSummarySchema.typeName}.name`]: {
    minLength: 1,
    maxLength: MAX_NAME_LENGTH,
    description: "The name the token was created with.",
    examples: ["my-bot"],
  },
  [`${CreateTokenResponseSchema.typeName}.token`]: {
    pattern: TOKEN_PATTERN,
    description: `The bearer token, returned once (the service keeps only its SHA-256). \`${TOKEN_PREFIX}\`, then in base64url the user's UUID bytes, the token id and 256 random bits, then a CRC32 checksum, so secret scanners can recognise a leaked one.`,
  },
};
