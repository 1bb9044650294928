import type { DescField } from "@bufbuild/protobuf";
import {
  CreateTokenRequestSchema,
  CreateTokenResponseSchema,
  DeleteTokenRequestSchema,
  TokenSummarySchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { TOKEN_PREFIX } from "@perps/token-client/protocol";
import type { JsonSchema } from "../../src/openapi/openapi-document.js";
import { DEFAULT_SERVICE_LIMITS, type ServiceLimits } from "../../src/openapi/service-limits.js";
import {
  DEFAULT_EXPIRES_IN_SECONDS,
  TIMESTAMP_TOLERANCE_MS,
} from "../../src/token/request-rules.js";
import { fieldRules } from "../../src/validation/validation-interceptor.js";

/*
 * What the OpenAPI document says about the token API beyond the request
 * rules, keyed by full name: descriptions, examples, the default lifetime
 * and the rule it brings (src/token/request-rules.ts), and the shape of the
 * responses. The request rules themselves (required, patterns, lengths,
 * ranges) come from the buf.validate rules of the proto (rule-schema.ts),
 * the ones the service enforces.
 */

function stringRule(field: DescField, rule: "pattern" | "maxLength"): string | number {
  const rules = fieldRules(field)?.type;
  if (rules?.case !== "string") {
    throw new Error(`${field.toString()} has no string rules`);
  }
  return rule === "pattern" ? rules.value.pattern : Number(rules.value.maxLen);
}

/** The signature's pattern, from the proto: `^[0-9a-f]{128}$`. */
export const SIGNATURE_PATTERN = String(
  stringRule(CreateTokenRequestSchema.field.signature, "pattern"),
);
const MAX_NAME_LENGTH = Number(stringRule(CreateTokenRequestSchema.field.name, "maxLength"));
const MAX_TOKEN_ID_LENGTH = Number(stringRule(DeleteTokenRequestSchema.field.tokenId, "maxLength"));

/**
 * The shape of a bearer token: `pt_`, 80 base64url characters (60 bytes: the
 * user's UUID, the token id, 256 random bits), a 6-character base62 checksum.
 */
export const TOKEN_PATTERN = `^${TOKEN_PREFIX}[A-Za-z0-9_-]{80}[0-9A-Za-z]{6}$`;

const toleranceMinutes = Number(TIMESTAMP_TOLERANCE_MS) / 60_000;

const signature: JsonSchema = {
  examples: ["3f".repeat(64)],
};

const timestamp: JsonSchema = {
  description: `Unix time in milliseconds. Must be within ±${toleranceMinutes} minutes of server time, otherwise the answer is 401 \`Signature expired\`.`,
  examples: [1_763_726_400_000],
};

const userId: JsonSchema = {
  description:
    "UUID of the user: hex digits in either case, version digit 1-8, variant digit 8, 9, a or b (or the nil or the all-f UUID). Sent and signed verbatim: do not re-case it.",
  examples: ["0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab"],
};

/** "31536000, 365 days": a lifetime in seconds, and in days when it is whole days. */
/** A token id in an answer (created or listed). */
const answeredTokenId: JsonSchema = {
  minLength: 1,
  maxLength: MAX_TOKEN_ID_LENGTH,
  description: "Token identifier (opaque), the `tokenId` of a delete.",
  examples: ["YAnc9iX83Ws3U0fLFuOMmw"],
};

/** A token's expiry date in an answer, as `description` says which. */
function expiryDate(description: string): JsonSchema {
  return {
    format: "date",
    pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    description,
    examples: ["2026-11-21"],
  };
}

function lifetimeText(seconds: number): string {
  const days = seconds / 86_400;
  return Number.isInteger(days)
    ? `${seconds}, ${days} day${days === 1 ? "" : "s"}`
    : String(seconds);
}

/**
 * The token API's constraints under these limits (the configuration in
 * force), for `createOpenApiDocument({ constraints })`: the largest
 * `expiresIn` is the configured one, so a client that sends only what the
 * schema allows is not refused.
 */
export function tokenApiConstraintsFor(
  limits: ServiceLimits,
): Readonly<Record<string, JsonSchema>> {
  return {
    [`${CreateTokenRequestSchema.typeName}.signature`]: signature,
    [`${CreateTokenRequestSchema.typeName}.timestamp`]: timestamp,
    [`${CreateTokenRequestSchema.typeName}.user_id`]: userId,
    [`${CreateTokenRequestSchema.typeName}.expires_in`]: {
      maximum: limits.maxLifetimeSeconds,
      default: DEFAULT_EXPIRES_IN_SECONDS,
      // The configured maximum as a plain number: the service sets it here
      // by substitution (openapi-limits.json), without this code.
      description: `Lifetime of the token in seconds: at least 1, at most ${limits.maxLifetimeSeconds} (this service's TOKEN_MAX_LIFETIME_SECONDS; default ${lifetimeText(DEFAULT_SERVICE_LIMITS.maxLifetimeSeconds)}). Omitted: ${DEFAULT_EXPIRES_IN_SECONDS} (7 days), and the signed message keeps its slot empty. Above ${DEFAULT_EXPIRES_IN_SECONDS}, \`name\` is required.`,
      examples: [3600],
    },
    [`${CreateTokenRequestSchema.typeName}.name`]: {
      description: `Unique among the user's live tokens; a token without a name is a session token. 1 to ${MAX_NAME_LENGTH} characters (Unicode code points), case-sensitive, no control characters and no unpaired surrogates.`,
      examples: ["my-bot"],
    },
    // Above the default lifetime a token must be named.
    [CreateTokenRequestSchema.typeName]: {
      if: {
        required: ["expiresIn"],
        properties: {
          expiresIn: { type: "integer", exclusiveMinimum: DEFAULT_EXPIRES_IN_SECONDS },
        },
      },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited.
      then: { required: ["name"] },
    },
    [`${DeleteTokenRequestSchema.typeName}.signature`]: signature,
    [`${DeleteTokenRequestSchema.typeName}.timestamp`]: timestamp,
    [`${DeleteTokenRequestSchema.typeName}.user_id`]: userId,
    [`${DeleteTokenRequestSchema.typeName}.token_id`]: {
      description: `The \`id\` the create answered (1 to ${MAX_TOKEN_ID_LENGTH} characters, no unpaired surrogates).`,
      examples: ["YAnc9iX83Ws3U0fLFuOMmw"],
    },
    // The service always sends all three.
    [CreateTokenResponseSchema.typeName]: { required: ["expiresAt", "id", "token"] },
    [`${CreateTokenResponseSchema.typeName}.expires_at`]: expiryDate(
      "UTC calendar date (YYYY-MM-DD) of the moment the token expires: server time plus its lifetime.",
    ),
    [`${CreateTokenResponseSchema.typeName}.id`]: answeredTokenId,
    // Every listed token has all three.
    [TokenSummarySchema.typeName]: { required: ["id", "name", "expiresAt"] },
    [`${TokenSummarySchema.typeName}.expires_at`]: expiryDate(
      "UTC calendar date (YYYY-MM-DD) of the moment the token expires, as CreateToken answered it.",
    ),
    [`${TokenSummarySchema.typeName}.id`]: answeredTokenId,
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
}

/** The constraints of the default configuration (the committed openapi.json). */
export const tokenApiConstraints = tokenApiConstraintsFor(DEFAULT_SERVICE_LIMITS);
