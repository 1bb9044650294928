import type { DescMethod } from "@bufbuild/protobuf";
import type { NodeServerRequest } from "../http/node-handler.js";
import { requestPath } from "../http/request-path.js";
import {
  type BoundVariable,
  compareTemplates,
  matchPathTemplate,
  templateShape,
} from "./path-template.js";
import { type RestRoute, restRoutesOfMethod } from "./rest-route.js";

export type RouteMatch =
  | { readonly kind: "found"; readonly route: RestRoute; readonly variables: BoundVariable[] }
  /** The path is known, but not for this HTTP method. */
  | { readonly kind: "method-not-allowed"; readonly allow: readonly string[] }
  | { readonly kind: "not-found" };

export interface RouteTable {
  /** Every route, most specific first. */
  readonly routes: readonly RestRoute[];
  match(httpMethod: string, rawPath: string): RouteMatch;
  /**
   * The match of a request's method and path, worked out once per request:
   * the CORS endpoint and the gateway ask for it in turn.
   */
  matchRequest(req: NodeServerRequest): RouteMatch;
}

/**
 * Builds the routes of every method that has a `google.api.http` rule.
 * Throws on a broken rule or on two rules claiming the same method and path,
 * so a conflict fails at start-up instead of shadowing a route.
 */
export function createRouteTable(methods: readonly DescMethod[]): RouteTable {
  const routes = methods
    .flatMap(restRoutesOfMethod)
    .sort((a, b) => compareTemplates(a.template, b.template));
  const seen = new Map<string, RestRoute>();
  for (const route of routes) {
    const key = `${route.httpMethod} ${templateShape(route.template)}`;
    const other = seen.get(key);
    if (other !== undefined) {
      throw new Error(
        `REST routes conflict: ${key} is bound by ${other.method.parent.typeName}.${other.method.name} and ${route.method.parent.typeName}.${route.method.name}`,
      );
    }
    seen.set(key, route);
  }
  // Per table: a request asked of two tables gets each one's own match.
  const matched = Symbol("route match");
  type Carrier = NodeServerRequest & { [matched]?: RouteMatch };
  const table: RouteTable = {
    routes,
    matchRequest(req) {
      const carrier = req as Carrier;
      let match = carrier[matched];
      if (match === undefined) {
        match = table.match(req.method ?? "", requestPath(req));
        carrier[matched] = match;
      }
      return match;
    },
    match(httpMethod, rawPath) {
      const allow = new Set<string>();
      for (const route of routes) {
        const variables = matchPathTemplate(route.template, rawPath);
        if (variables === undefined) {
          continue;
        }
        if (route.httpMethod === httpMethod) {
          return { kind: "found", route, variables };
        }
        allow.add(route.httpMethod);
      }
      return allow.size > 0
        ? { kind: "method-not-allowed", allow: [...allow].sort() }
        : { kind: "not-found" };
    },
  };
  return table;
}
