import { Code } from "@connectrpc/connect";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { ERROR_DOMAIN, TOKEN_ALREADY_CREATED, TOKEN_PREFIX } from "@perps/token-client/protocol";
import { parseConfig } from "../../src/config/config.js";
import type {
  OpenApiDocument,
  OpenApiHeader,
  OpenApiLicense,
  OpenApiServer,
} from "../../src/openapi/openapi-document.js";
import { DEFAULT_SERVICE_LIMITS, type ServiceLimits } from "../../src/openapi/service-limits.js";
import {
  DEFAULT_EXPIRES_IN_SECONDS,
  TIMESTAMP_TOLERANCE_MS,
} from "../../src/token/request-rules.js";
import { BEARER_CHALLENGE, INVALID_TOKEN_CHALLENGE } from "../../src/token/token-errors.js";
import { createOpenApiDocument } from "./create-openapi-document.js";
import type { ErrorAnswer } from "./error-responses.js";
import type { CommentSource } from "./proto-comments.js";
import { tokenApiConstraintsFor } from "./token-api-constraints.js";
import {
  createTokenNotes,
  deleteTokenNotes,
  listTokensNotes,
  tokenApiDescription,
} from "./token-api-description.js";

export interface TokenApiDocumentOptions {
  /**
   * Where proto comments come from. Default: none found (the descriptors
   * generated code embeds carry no comments); `npm run openapi` passes the
   * comments of a `buf build` image.
   */
  comments?: CommentSource;
  /** Where the API is served (`servers`). Default: `tokenApiServers`. */
  servers?: readonly OpenApiServer[];
  /** The limits of the configuration the document describes. Default: the default configuration's. */
  limits?: ServiceLimits;
}

// The configuration of an empty environment: the default listener.
const defaults = parseConfig({});

/**
 * The default `servers`: the service the document was fetched from (it
 * serves it on its public listener), then a service started locally with
 * the default configuration.
 */
export const tokenApiServers: readonly OpenApiServer[] = [
  {
    url: "/",
    description:
      "The service this document was fetched from: its public listener serves it at `GET /openapi.json`, next to the API.",
  },
  {
    url: `http://${defaults.host}:${defaults.publicPort}`,
    description: `The public listener of a service started locally with the default configuration (\`npm start\`: HOST ${defaults.host}, PUBLIC_PORT ${defaults.publicPort}, no TLS).`,
  },
];

/*
 * package.json says UNLICENSED (and private): no one is granted a license to
 * use the service or its API outside the platform. SPDX lists no identifier
 * for that; `LicenseRef-` is SPDX's form for a license not on its list.
 */
const license: OpenApiLicense = {
  name: "Proprietary",
  identifier: "LicenseRef-Proprietary",
};

const createToken = `${TokenService.typeName}.${TokenService.method.createToken.name}`;
const deleteToken = `${TokenService.typeName}.${TokenService.method.deleteToken.name}`;
const listTokens = `${TokenService.typeName}.${TokenService.method.listTokens.name}`;

const toleranceMinutes = Number(TIMESTAMP_TOLERANCE_MS) / 60_000;

const retryAfter: Record<string, OpenApiHeader> = {
  "Retry-After": {
    description: "Seconds to wait before trying again.",
    required: true,
    schema: { type: "integer", minimum: 1 },
  },
};

const shapeRules: ErrorAnswer = {
  code: Code.InvalidArgument,
  description:
    "A field breaks its rule; the message names each wrong field by its JSON name, e.g. `signature: must be exactly 128 lowercase hex characters, without 0x prefix`.",
};

const unauthenticated: ErrorAnswer = {
  code: Code.Unauthenticated,
  description: `\`Signature expired\` (timestamp more than ${toleranceMinutes} minutes from server time), \`Invalid signature\` (it does not verify under a key of the user; unknown users get the same answer) or \`Signature already used\` (the same signed request came before, whatever its answer; sign it again with a new timestamp).`,
};

const unavailable: ErrorAnswer = {
  code: Code.Unavailable,
  description:
    "The token store is unreachable or too slow (answered within about a second). Nothing was done; the same request can be retried.",
};

function rateLimited(limits: ServiceLimits, alsoCap: boolean): ErrorAnswer {
  const rate = `Too many signed calls for this user (this service allows ${limits.rateLimitPerMinute} per minute: TOKEN_RATE_LIMIT_PER_MINUTE, default ${DEFAULT_SERVICE_LIMITS.rateLimitPerMinute})`;
  return {
    code: Code.ResourceExhausted,
    description: alsoCap
      ? `${rate}, or the user already has the most live tokens allowed (this service allows ${limits.maxActivePerUser}: TOKEN_MAX_ACTIVE_PER_USER, default ${DEFAULT_SERVICE_LIMITS.maxActivePerUser}, session tokens included).`
      : `${rate}.`,
    headers: retryAfter,
  };
}

/** The ways CreateToken and DeleteToken fail under these limits, beyond the gateway's own answers. */
export function tokenApiErrorsFor(
  limits: ServiceLimits,
): Readonly<Record<string, readonly ErrorAnswer[]>> {
  return {
    [createToken]: [
      shapeRules,
      {
        code: Code.InvalidArgument,
        description: `\`expiresIn\` is above ${limits.maxLifetimeSeconds} (TOKEN_MAX_LIFETIME_SECONDS), or above ${DEFAULT_EXPIRES_IN_SECONDS} without a \`name\`.`,
      },
      unauthenticated,
      {
        code: Code.AlreadyExists,
        description: "A live token of the user already has this `name`.",
      },
      {
        code: Code.AlreadyExists,
        description: `\`Signature already used: this request created token <id>\`: the same signed request was accepted before (its answer may have been lost) and its token is still live. The token is not returned again; \`details\` holds a \`google.rpc.ErrorInfo\` with \`reason\` \`${TOKEN_ALREADY_CREATED}\`, \`domain\` \`${ERROR_DOMAIN}\` and \`metadata.tokenId\`, so the client can delete that token (a signed delete) and create a new one.`,
      },
      rateLimited(limits, true),
      unavailable,
    ],
    [deleteToken]: [
      shapeRules,
      unauthenticated,
      {
        code: Code.NotFound,
        description:
          "No live token of the user has this `tokenId` (it never existed, has expired, was deleted or belongs to another user).",
      },
      rateLimited(limits, false),
      unavailable,
    ],
    [listTokens]: [
      {
        code: Code.InvalidArgument,
        description:
          "`pageSize` is above 100, or `pageToken` is not a `nextPageToken` this service answered.",
      },
      {
        code: Code.Unauthenticated,
        description: `No \`Authorization\` header, or not a \`Bearer\` one: \`WWW-Authenticate: ${BEARER_CHALLENGE}\`. A bearer token that is not a live token of the service (malformed, unknown, expired or deleted; all get the same answer): \`WWW-Authenticate: ${INVALID_TOKEN_CHALLENGE}\`.`,
        headers: {
          "WWW-Authenticate": {
            description: "The bearer challenge (RFC 6750).",
            required: true,
            schema: { type: "string", enum: [BEARER_CHALLENGE, INVALID_TOKEN_CHALLENGE] },
          },
        },
      },
      {
        code: Code.ResourceExhausted,
        description:
          "Too many list calls (pages) for this user (TOKEN_LIST_RATE_LIMIT_PER_MINUTE, default 120 per minute, separate from create and delete's rate).",
        headers: retryAfter,
      },
      {
        code: Code.Unavailable,
        description:
          "The token store is unreachable or too slow (answered within about a second); the same request can be retried.",
      },
    ],
  };
}

/**
 * The OpenAPI 3.1 document of the token service's REST API: generated from
 * TokenService's descriptors and google.api.http rules, with the field rules
 * of src/token, the signing scheme and the errors the service answers.
 */
export function createTokenApiOpenApiDocument(opts: TokenApiDocumentOptions = {}): OpenApiDocument {
  const limits = opts.limits ?? DEFAULT_SERVICE_LIMITS;
  return createOpenApiDocument({
    services: [TokenService],
    info: {
      title: "Perps token service: API token management",
      version: "1.0",
      description: tokenApiDescription,
      license,
    },
    servers: opts.servers ?? tokenApiServers,
    ...(opts.comments === undefined ? {} : { comments: opts.comments }),
    constraints: tokenApiConstraintsFor(limits),
    methodErrors: tokenApiErrorsFor(limits),
    operationNotes: {
      [createToken]: createTokenNotes,
      [deleteToken]: deleteTokenNotes,
      [listTokens]: listTokensNotes,
    },
    bearerAuthDescription: `A live token of the user (\`${TOKEN_PREFIX}…\`, as CreateToken answered it), named or session, sent as \`Authorization: Bearer <token>\` (RFC 6750).`,
  });
}
