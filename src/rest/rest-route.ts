import type { DescField, DescMethod, DescService } from "@bufbuild/protobuf";
import { getOption, hasOption } from "@bufbuild/protobuf";
import { http } from "@perps/token-client/contract/google/api/annotations_pb.js";
import type { HttpRule } from "@perps/token-client/contract/google/api/http_pb.js";
import { http_success_status } from "@perps/token-client/contract/perps/api/v1/http_pb.js";
import { isBindablePath, resolveFieldPath } from "./field-path.js";
import { type PathTemplate, parsePathTemplate } from "./path-template.js";

/** Where the HTTP request body goes in the request message. */
export type RestBody =
  | { readonly kind: "none" }
  /** `body: "*"`: every field not bound by the path. */
  | { readonly kind: "all" }
  /** `body: "<field>"`: one top-level field. */
  | { readonly kind: "field"; readonly field: DescField };

/**
 * One HTTP binding of an RPC, from its `google.api.http` rule or one of the
 * rule's additional bindings. Plain descriptors, so OpenAPI can be generated
 * from the same routes the gateway serves.
 */
export interface RestRoute {
  readonly method: DescMethod;
  /** HTTP method in upper case, e.g. "POST"; `custom` rules use their kind. */
  readonly httpMethod: string;
  readonly template: PathTemplate;
  /** Field paths of the path variables, resolved on the request message. */
  readonly pathFields: readonly (readonly DescField[])[];
  readonly body: RestBody;
  /** `response_body`: the response field sent instead of the whole message. */
  readonly responseBody: DescField | undefined;
  /** From `(perps.api.v1.http_success_status)`, default 200. */
  readonly successStatus: number;
}

/** The REST routes of every annotated method of a service. */
export function restRoutesOfService(service: DescService): RestRoute[] {
  return service.methods.flatMap(restRoutesOfMethod);
}

/**
 * The REST routes of one method: none without a `google.api.http` rule.
 * Throws on a rule the gateway cannot serve (bad template or field, or a
 * streaming method), so a broken annotation fails at start-up.
 */
export function restRoutesOfMethod(method: DescMethod): RestRoute[] {
  if (!hasOption(method, http)) {
    return [];
  }
  const where = `${method.parent.typeName}.${method.name}`;
  if (method.methodKind !== "unary") {
    throw new Error(`${where}: the REST gateway only serves unary methods`);
  }
  const successStatus = hasOption(method, http_success_status)
    ? getOption(method, http_success_status)
    : 200;
  if (!Number.isInteger(successStatus) || successStatus < 200 || successStatus > 299) {
    throw new Error(`${where}: http_success_status ${successStatus} is not a 2xx status`);
  }
  const rule = getOption(method, http);
  const bindings = [rule, ...rule.additionalBindings];
  return bindings.map((binding, i) => {
    if (i > 0 && binding.additionalBindings.length > 0) {
      throw new Error(`${where}: additional_bindings must not nest`);
    }
    return routeOf(method, binding, successStatus, where);
  });
}

function routeOf(
  method: DescMethod,
  rule: HttpRule,
  successStatus: number,
  where: string,
): RestRoute {
  const { httpMethod, path } = verbAndPath(rule, where);
  const template = parsePathTemplate(path);
  const input = method.input;
  const pathFields = template.variables.map((v) => {
    const fields = resolveFieldPath(input, v.fieldPath);
    if (fields === undefined || !isBindablePath(fields, false)) {
      throw new Error(
        `${where}: path variable {${v.fieldPath.join(".")}} must name a singular scalar or enum field`,
      );
    }
    return fields;
  });
  return {
    method,
    httpMethod,
    template,
    pathFields,
    body: bodyOf(rule.body, method, where),
    responseBody: responseBodyOf(rule.responseBody, method, where),
    successStatus,
  };
}

function verbAndPath(rule: HttpRule, where: string): { httpMethod: string; path: string } {
  const p = rule.pattern;
  switch (p.case) {
    case "get":
    case "put":
    case "post":
    case "delete":
    case "patch":
      return { httpMethod: p.case.toUpperCase(), path: p.value };
    case "custom":
      if (!/^[A-Za-z]+$/.test(p.value.kind)) {
        throw new Error(`${where}: bad custom HTTP method "${p.value.kind}"`);
      }
      return { httpMethod: p.value.kind.toUpperCase(), path: p.value.path };
    default:
      throw new Error(`${where}: google.api.http rule without a pattern`);
  }
}

function bodyOf(body: string, method: DescMethod, where: string): RestBody {
  if (body === "") {
    return { kind: "none" };
  }
  if (body === "*") {
    return { kind: "all" };
  }
  const field = method.input.fields.find((f) => f.name === body);
  if (field === undefined) {
    throw new Error(`${where}: body "${body}" is not a field of ${method.input.typeName}`);
  }
  return { kind: "field", field };
}

function responseBodyOf(name: string, method: DescMethod, where: string): DescField | undefined {
  if (name === "") {
    return undefined;
  }
  const field = method.output.fields.find((f) => f.name === name);
  if (field === undefined) {
    throw new Error(
      `${where}: response_body "${name}" is not a field of ${method.output.typeName}`,
    );
  }
  return field;
}
