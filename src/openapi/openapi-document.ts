/**
 * The part of OpenAPI 3.1 (https://spec.openapis.org/oas/v3.1.0) that the
 * generator writes. Plain JSON objects, so a document can be written to a
 * file, served and validated as it is.
 */

/** A JSON Schema (2020-12 dialect, as OpenAPI 3.1 uses it). Open: other keywords may appear too. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  enum?: (string | number | boolean | null)[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
  deprecated?: boolean;
  [keyword: string]: unknown;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  summary?: string;
  license?: OpenApiLicense;
}

/** The API's license: a name, and an SPDX expression (`identifier`) or a URL of its text. */
export interface OpenApiLicense {
  name: string;
  identifier?: string;
  url?: string;
}

export interface OpenApiServer {
  url: string;
  description?: string;
}

export interface OpenApiTag {
  name: string;
  description?: string;
}

export interface OpenApiParameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  description?: string;
  deprecated?: boolean;
  schema: JsonSchema;
}

export interface OpenApiHeader {
  description?: string;
  required?: boolean;
  schema: JsonSchema;
}

export interface OpenApiMediaType {
  schema: JsonSchema;
}

export interface OpenApiRequestBody {
  description?: string;
  required: boolean;
  content: Record<string, OpenApiMediaType>;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiHeader>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiOperation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  parameters?: OpenApiParameter[];
  requestBody?: OpenApiRequestBody;
  responses: Record<string, OpenApiResponse>;
  /**
   * Each entry is one way to authenticate: a security scheme's name and its
   * scopes. Empty: the operation asks for none of the document's schemes.
   */
  security?: Record<string, string[]>[];
}

/** An HTTP authentication scheme (RFC 7235), e.g. `bearer`. */
export interface OpenApiSecurityScheme {
  type: "http";
  scheme: string;
  bearerFormat?: string;
  description?: string;
}

/** HTTP methods a path item can hold in OpenAPI 3.1, in the order the spec lists them. */
export const openApiHttpMethods = [
  "get",
  "put",
  "post",
  "delete",
  "options",
  "head",
  "patch",
  "trace",
] as const;

export type OpenApiHttpMethod = (typeof openApiHttpMethods)[number];

export type OpenApiPathItem = { [M in OpenApiHttpMethod]?: OpenApiOperation } & {
  /**
   * Operations under HTTP methods OpenAPI 3.1 has no field for (a
   * `google.api.http` `custom` rule such as LINK), keyed by the method.
   */
  "x-custom-operations"?: Record<string, OpenApiOperation>;
};

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: OpenApiInfo;
  servers?: OpenApiServer[];
  tags?: OpenApiTag[];
  paths: Record<string, OpenApiPathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes?: Record<string, OpenApiSecurityScheme>;
  };
}
