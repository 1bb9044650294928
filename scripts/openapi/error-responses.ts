import { Code } from "@connectrpc/connect";
import { grpcCodeName, httpStatusFromCode } from "@perps/token-client/protocol";
import type {
  JsonSchema,
  OpenApiHeader,
  OpenApiResponse,
} from "../../src/openapi/openapi-document.js";

/** Name of the error body's component schema. */
export const STATUS_SCHEMA_NAME = "google.rpc.Status";
const STATUS_REF = `#/components/schemas/${STATUS_SCHEMA_NAME}`;

/** One way an operation can fail, as documented in its responses. */
export interface ErrorAnswer {
  /** The gRPC code in the body. */
  code: Code;
  /** When it happens (Markdown). */
  description: string;
  /**
   * The HTTP status. Default: the gateway's mapping of `code`
   * (client/src/protocol/http-status.ts); only the HTTP layer's own answers (413,
   * 415) differ from it.
   */
  httpStatus?: number;
  /** Response headers that come with it, e.g. Retry-After. Default: none. */
  headers?: Record<string, OpenApiHeader>;
}

const allCodes: Code[] = Object.values(Code).filter((v): v is Code => typeof v === "number");

/**
 * The google.rpc.Status JSON body every REST error has (src/rest/rest-error.ts),
 * with the code → HTTP status mapping of the gateway in its description, so
 * that table cannot drift from the code.
 */
export function statusSchema(): JsonSchema {
  const rows = allCodes.map((c) => `| ${c} | \`${grpcCodeName(c)}\` | ${httpStatusFromCode(c)} |`);
  return {
    type: "object",
    description: [
      "The error body of every REST error (google.rpc.Status in JSON).",
      "The HTTP status follows from `code`, except for the HTTP layer's own answers: 404 for an unknown path (code 5), 405 for another method on a known path (code 12, with `Allow`), 413 for a body over the size limit and 415 for a body that is not `application/json` (both code 3).",
      ["| code | name | HTTP status |", "|---|---|---|", ...rows].join("\n"),
    ].join("\n\n"),
    required: ["code", "message", "details"],
    properties: {
      code: {
        type: "integer",
        format: "int32",
        minimum: 1,
        maximum: Math.max(...allCodes),
        description: "The gRPC status code.",
      },
      message: { type: "string", description: "What went wrong, for developers (English)." },
      details: {
        type: "array",
        description:
          "Error details, usually none. Each is a google.protobuf.Any in protojson: `@type` is `type.googleapis.com/` and the full name of a standard error detail of google/rpc/error_details.proto (e.g. `google.rpc.ErrorInfo`), the other members are its fields.",
        items: {
          type: "object",
          properties: { "@type": { type: "string" } },
          required: ["@type"],
        },
      },
    },
  };
}

/**
 * The error responses of an operation, one per HTTP status: the codes the
 * body can carry at that status and every documented reason. Sorted by
 * status.
 */
export function errorResponses(answers: readonly ErrorAnswer[]): Record<string, OpenApiResponse> {
  const byStatus = new Map<number, ErrorAnswer[]>();
  for (const answer of answers) {
    const status = answer.httpStatus ?? httpStatusFromCode(answer.code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), answer]);
  }
  const responses: Record<string, OpenApiResponse> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const codes = [...new Set(group.map((a) => a.code))].sort((a, b) => a - b);
    const descriptions = [...new Set(group.map((a) => a.description))];
    const headers = Object.assign({}, ...group.map((a) => a.headers ?? {}));
    responses[String(status)] = {
      description:
        descriptions.length === 1
          ? (descriptions[0] ?? "")
          : descriptions.map((d) => `- ${d}`).join("\n"),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: { "application/json": { schema: statusWithCodes(codes) } },
    };
  }
  return responses;
}

/** The `default` response: every other error, with the Status body. */
export function defaultErrorResponse(): OpenApiResponse {
  return {
    description:
      "Any other error (e.g. 500 for an internal error); the body is a google.rpc.Status.",
    content: { "application/json": { schema: { $ref: STATUS_REF } } },
  };
}

function statusWithCodes(codes: readonly Code[]): JsonSchema {
  return {
    type: "object",
    allOf: [{ $ref: STATUS_REF }],
    properties: { code: { enum: [...codes] } },
  };
}
