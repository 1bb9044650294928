import { STATUS_CODES } from "node:http";
import {
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescService,
  getOption,
  hasOption,
} from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { bearer_auth } from "@perps/token-client/contract/perps/api/v1/http_pb.js";
import {
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiHttpMethod,
  type OpenApiInfo,
  type OpenApiOperation,
  type OpenApiParameter,
  type OpenApiPathItem,
  type OpenApiRequestBody,
  type OpenApiResponse,
  type OpenApiSecurityScheme,
  type OpenApiServer,
  openApiHttpMethods,
} from "../../src/openapi/openapi-document.js";
import { isBindablePath } from "../../src/rest/field-path.js";
import { type RestRoute, restRoutesOfService } from "../../src/rest/rest-route.js";
import { isRequired } from "../../src/validation/validation-interceptor.js";
import {
  defaultErrorResponse,
  type ErrorAnswer,
  errorResponses,
  STATUS_SCHEMA_NAME,
  statusSchema,
} from "./error-responses.js";
import { createSchemaBuilder, type NamedType, type SchemaBuilder } from "./json-schema.js";
import { type OpenApiPathParam, openApiPathOf, pathShape } from "./openapi-path.js";
import { type CommentSource, sourceInfoComments } from "./proto-comments.js";

export interface CreateOpenApiDocumentOptions {
  /**
   * The services to describe: every `google.api.http` binding of their
   * methods becomes an operation, read with the gateway's own
   * `restRoutesOfService`; methods without a rule are left out.
   */
  services: readonly DescService[];
  /**
   * Title, version, summary, description and license of the API. Default:
   * the services' full names as title, version "1.0.0", the services' proto
   * comments as description, no license.
   */
  info?: Partial<OpenApiInfo>;
  /**
   * Where the API is served (OpenAPI `servers`), e.g.
   * `[{ url: "https://api.example.com" }]`. Default: none, so paths are
   * relative to where the document is served.
   */
  servers?: readonly OpenApiServer[];
  /**
   * JSON Schema keywords the proto cannot carry (patterns, ranges, formats,
   * defaults), merged over the generated schema of a field or message, keyed
   * by full name: `pkg.Message.field_name` or `pkg.Message`. Default: none.
   */
  constraints?: Readonly<Record<string, JsonSchema>>;
  /**
   * The ways each method can fail besides the gateway's own (400 for a
   * malformed request, 413, 415), keyed by the method's full name
   * (`pkg.Service.Method`). Default: none (other errors fall under `default`).
   */
  methodErrors?: Readonly<Record<string, readonly ErrorAnswer[]>>;
  /**
   * Markdown added to an operation's description after the method's proto
   * comment, keyed by the method's full name. Default: none.
   */
  operationNotes?: Readonly<Record<string, string>>;
  /**
   * Where descriptions come from. Default: the descriptors' own source info,
   * which the descriptors embedded by protoc-gen-es do not carry (see
   * `commentsFromRegistry`).
   */
  comments?: CommentSource;
  /** Largest request body the gateway accepts, in bytes (the 413 text). Default 65536, the gateway's default. */
  maxBodyBytes?: number;
  /**
   * Description of the `bearerAuth` security scheme, which the operations of
   * methods with `(perps.api.v1.bearer_auth) = true` require. The other
   * operations declare `security: []`: the gateway asks them for no
   * credential (whatever the method checks itself, such as a signature in
   * the body, is for `operationNotes` to say). Default: a generic one.
   */
  bearerAuthDescription?: string;
}

/** Name of the security scheme of methods authenticated by a bearer token. */
export const BEARER_AUTH_SCHEME = "bearerAuth";

/** True when the method is authenticated by a bearer token: `(perps.api.v1.bearer_auth) = true`. */
export function isBearerAuthMethod(method: DescMethod): boolean {
  return hasOption(method, bearer_auth) && getOption(method, bearer_auth);
}

// Fields nested deeper than this are not offered as query parameters (a
// message may contain itself).
const MAX_QUERY_DEPTH = 8;

/**
 * The OpenAPI 3.1 document of the REST mapping the gateway serves for the
 * given services: paths from the path templates, query parameters for the
 * fields neither in the path nor in the body, request bodies for `body: "*"`
 * and `body: "<field>"`, the response (or its `response_body` field) under
 * the method's success status, and the google.rpc.Status error responses.
 * Deterministic: the same descriptors give the same document.
 *
 * Throws when two routes give OpenAPI paths that differ only in parameter
 * names (OpenAPI counts them as one path).
 */
export function createOpenApiDocument(opts: CreateOpenApiDocumentOptions): OpenApiDocument {
  const comments = opts.comments ?? sourceInfoComments;
  const routes = opts.services.flatMap((service) => restRoutesOfService(service));
  const schemas = createSchemaBuilder({
    comments,
    ...(opts.constraints === undefined ? {} : { constraints: opts.constraints }),
    inputRoots: routes.flatMap(requestBodyTypes),
    outputRoots: routes.flatMap(responseBodyTypes),
  });
  const maxBodyBytes = opts.maxBodyBytes ?? 64 * 1024;

  const paths = new Map<string, OpenApiPathItem>();
  const shapes = new Map<string, string>();
  const bindingsSeen = new Map<string, number>();
  for (const route of routes) {
    const { path, params } = openApiPathOf(route);
    const shape = pathShape(path);
    const other = shapes.get(shape);
    if (other !== undefined && other !== path) {
      throw new Error(
        `OpenAPI paths ${other} and ${path} differ only in parameter names; OpenAPI counts them as one path`,
      );
    }
    shapes.set(shape, path);
    const fullName = `${route.method.parent.typeName}.${route.method.name}`;
    const binding = (bindingsSeen.get(fullName) ?? 0) + 1;
    bindingsSeen.set(fullName, binding);
    const operation = operationOf(route, params, {
      schemas,
      comments,
      operationId: binding === 1 ? fullName : `${fullName}-${binding}`,
      notes: opts.operationNotes?.[fullName],
      errors: opts.methodErrors?.[fullName] ?? [],
      maxBodyBytes,
    });
    const item = paths.get(path) ?? {};
    const method = route.httpMethod.toLowerCase();
    if (isOpenApiMethod(method)) {
      item[method] = operation;
    } else {
      item["x-custom-operations"] = {
        ...item["x-custom-operations"],
        [route.httpMethod]: operation,
      };
    }
    paths.set(path, item);
  }

  const info: OpenApiInfo = {
    title: opts.info?.title ?? opts.services.map((s) => s.typeName).join(", "),
    version: opts.info?.version ?? "1.0.0",
  };
  if (opts.info?.summary !== undefined) {
    info.summary = opts.info.summary;
  }
  const description =
    opts.info?.description ??
    opts.services
      .map((s) => comments(s))
      .filter((c) => c !== undefined)
      .join("\n\n");
  if (description !== "") {
    info.description = description;
  }
  if (opts.info?.license !== undefined) {
    info.license = opts.info.license;
  }
  const doc: OpenApiDocument = {
    openapi: "3.1.0",
    info,
    ...(opts.servers === undefined || opts.servers.length === 0
      ? {}
      : { servers: [...opts.servers] }),
    paths: {},
    components: { schemas: {} },
  };
  if (routes.some((r) => isBearerAuthMethod(r.method))) {
    const scheme: OpenApiSecurityScheme = {
      type: "http",
      scheme: "bearer",
      description:
        opts.bearerAuthDescription ??
        "A bearer token, sent as `Authorization: Bearer <token>` (RFC 6750).",
    };
    doc.components.securitySchemes = { [BEARER_AUTH_SCHEME]: scheme };
  }
  doc.tags = opts.services
    .filter((s) => routes.some((r) => r.method.parent === s))
    .map((s) => {
      const text = comments(s);
      return text === undefined ? { name: s.typeName } : { name: s.typeName, description: text };
    });
  doc.paths = Object.fromEntries(
    [...paths]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([p, item]) => [p, ordered(item)]),
  );
  doc.components.schemas = { ...schemas.components(), [STATUS_SCHEMA_NAME]: statusSchema() };
  doc.components.schemas = Object.fromEntries(
    Object.entries(doc.components.schemas).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  return doc;
}

interface OperationContext {
  schemas: SchemaBuilder;
  comments: CommentSource;
  operationId: string;
  notes: string | undefined;
  errors: readonly ErrorAnswer[];
  maxBodyBytes: number;
}

function operationOf(
  route: RestRoute,
  pathParams: readonly OpenApiPathParam[],
  ctx: OperationContext,
): OpenApiOperation {
  const { method } = route;
  const description = [ctx.comments(method), ctx.notes].filter((t) => t !== undefined).join("\n\n");
  const parameters = [
    ...pathParams.map((p) => pathParameter(p, ctx)),
    ...queryParameters(route, ctx),
  ];
  const body = requestBodyOf(route, ctx.schemas);
  return {
    operationId: ctx.operationId,
    summary: method.name,
    ...(description === "" ? {} : { description }),
    tags: [method.parent.typeName],
    ...(method.deprecated ? { deprecated: true } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body === undefined ? {} : { requestBody: body }),
    responses: {
      [String(route.successStatus)]: successResponse(route, ctx.schemas),
      ...errorResponses([...gatewayErrors(route, ctx.maxBodyBytes), ...ctx.errors]),
      default: defaultErrorResponse(),
    },
    security: isBearerAuthMethod(method) ? [{ [BEARER_AUTH_SCHEME]: [] }] : [],
  };
}

function pathParameter(param: OpenApiPathParam, ctx: OperationContext): OpenApiParameter {
  const leaf = param.fields?.[param.fields.length - 1];
  const lines: string[] = [];
  const comment = leaf === undefined ? undefined : ctx.comments(leaf);
  if (leaf === undefined) {
    lines.push(`Any value for \`${param.segments}\`; not bound to a request field.`);
  } else if (comment !== undefined) {
    lines.push(comment);
  }
  if (param.multiSegmentPattern !== undefined) {
    lines.push(
      `Spans several path segments (\`${param.segments}\`): the value's slashes are sent as they are, not percent-encoded.`,
    );
  }
  const schema: JsonSchema = leaf === undefined ? { type: "string" } : ctx.schemas.textField(leaf);
  if (param.multiSegmentPattern !== undefined) {
    schema.type = "string";
    schema.pattern = param.multiSegmentPattern;
  }
  return {
    name: param.name,
    in: "path",
    required: true,
    ...(lines.length > 0 ? { description: lines.join("\n\n") } : {}),
    ...(leaf?.deprecated ? { deprecated: true } : {}),
    schema,
  };
}

/**
 * Per http.proto, the fields neither in the path nor in the body can be set
 * from the query (not with `body: "*"`), nested ones by dotted name.
 */
function queryParameters(route: RestRoute, ctx: OperationContext): OpenApiParameter[] {
  if (route.body.kind === "all") {
    return [];
  }
  const bodyField = route.body.kind === "field" ? route.body.field : undefined;
  const inPath = (chain: readonly DescField[]) =>
    route.pathFields.some((p) => p.length === chain.length && p.every((f, i) => f === chain[i]));
  const params: OpenApiParameter[] = [];
  const visit = (message: DescMessage, chain: readonly DescField[], seen: ReadonlySet<string>) => {
    for (const field of message.fields) {
      const fields = [...chain, field];
      if (fields[0] === bodyField || inPath(fields)) {
        continue;
      }
      if (isBindablePath(fields, true)) {
        params.push(queryParameter(fields, ctx));
      } else if (
        field.fieldKind === "message" &&
        !seen.has(field.message.typeName) &&
        fields.length < MAX_QUERY_DEPTH &&
        !field.message.typeName.startsWith("google.protobuf.")
      ) {
        visit(field.message, fields, new Set([...seen, field.message.typeName]));
      }
    }
  };
  visit(route.method.input, [], new Set([route.method.input.typeName]));
  return params;
}

function queryParameter(fields: readonly DescField[], ctx: OperationContext): OpenApiParameter {
  const leaf = fields[fields.length - 1];
  if (leaf === undefined) {
    throw new Error("empty field path");
  }
  const description = ctx.comments(leaf);
  const required = fields.length === 1 && isRequired(leaf);
  return {
    name: fields.map((f) => f.jsonName).join("."),
    in: "query",
    ...(required ? { required: true } : {}),
    ...(description === undefined ? {} : { description }),
    ...(leaf.deprecated ? { deprecated: true } : {}),
    schema: ctx.schemas.textField(leaf),
  };
}

function requestBodyOf(route: RestRoute, schemas: SchemaBuilder): OpenApiRequestBody | undefined {
  const input = route.method.input;
  let schema: JsonSchema;
  switch (route.body.kind) {
    case "none":
      return undefined;
    case "field":
      schema = schemas.field(route.body.field, "input");
      break;
    case "all": {
      // With body "*", the fields bound by the path are not part of the body.
      const inPath = new Set(route.pathFields.filter((p) => p.length === 1).flat());
      schema =
        inPath.size === 0
          ? schemas.message(input, "input")
          : schemas.messageWithout(input, "input", inPath);
      break;
    }
  }
  return {
    description:
      "JSON (`application/json`, UTF-8). Fields are typed strictly: integers are JSON numbers, never strings, and `null` is refused. Unknown fields are ignored.",
    required: true,
    content: { "application/json": { schema } },
  };
}

function successResponse(route: RestRoute, schemas: SchemaBuilder): OpenApiResponse {
  const status = route.successStatus;
  const description = STATUS_CODES[status] ?? "Success";
  if (status === 204 || status === 205) {
    return { description };
  }
  const field = route.responseBody;
  let schema: JsonSchema;
  if (field === undefined) {
    schema = schemas.message(route.method.output, "output");
    // The gateway always writes the response's own lists and maps, empty
    // ones included (transcodeResponse, rest-gateway.ts).
    const collections = route.method.output.fields
      .filter((f) => f.fieldKind === "list" || f.fieldKind === "map")
      .map((f) => f.jsonName);
    if (collections.length > 0) {
      schema = { type: "object", allOf: [schema], required: collections };
    }
  } else {
    schema = schemas.field(field, "output");
    // An unset field with explicit presence is written as null.
    if (
      (field.fieldKind === "scalar" || field.fieldKind === "enum") &&
      field.presence === FeatureSet_FieldPresence.EXPLICIT
    ) {
      schema = { anyOf: [schema, { type: "null" }] };
    }
  }
  return { description, content: { "application/json": { schema } } };
}

/** The answers of the gateway itself, before the method runs. */
function gatewayErrors(route: RestRoute, maxBodyBytes: number): ErrorAnswer[] {
  const answers: ErrorAnswer[] = [
    {
      code: Code.InvalidArgument,
      description:
        "The request does not fit the schema: a value of the wrong JSON type, an integer out of range or written as a string, a missing required field, or a body that is not a JSON object.",
    },
  ];
  if (route.body.kind !== "none") {
    answers.push(
      {
        code: Code.InvalidArgument,
        httpStatus: 413,
        description: `The request body is larger than ${maxBodyBytes} bytes.`,
      },
      {
        code: Code.InvalidArgument,
        httpStatus: 415,
        description:
          "The request body is not `application/json` (a `charset` parameter other than UTF-8 counts as not).",
      },
    );
  }
  return answers;
}

function requestBodyTypes(route: RestRoute): NamedType[] {
  switch (route.body.kind) {
    case "none":
      return [];
    case "all":
      return [route.method.input];
    case "field":
      return typesOfField(route.body.field);
  }
}

function responseBodyTypes(route: RestRoute): NamedType[] {
  return route.responseBody === undefined
    ? [route.method.output]
    : typesOfField(route.responseBody);
}

function typesOfField(field: DescField): NamedType[] {
  return [field.message, field.enum].filter((t) => t !== undefined);
}

function isOpenApiMethod(method: string): method is OpenApiHttpMethod {
  return (openApiHttpMethods as readonly string[]).includes(method);
}

/** A path item's operations in the order the OpenAPI spec lists the methods. */
function ordered(item: OpenApiPathItem): OpenApiPathItem {
  const out: OpenApiPathItem = {};
  for (const method of openApiHttpMethods) {
    const operation = item[method];
    if (operation !== undefined) {
      out[method] = operation;
    }
  }
  const custom = item["x-custom-operations"];
  if (custom !== undefined) {
    out["x-custom-operations"] = Object.fromEntries(
      Object.entries(custom).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  }
  return out;
}
