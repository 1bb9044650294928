import type { UniversalHandler } from "@connectrpc/connect/protocol";
import {
  type BoundVariable,
  compareTemplates,
  matchPathTemplate,
  templateShape,
} from "./path-template.js";
import { type RestRoute, restRoutesOfMethod } from "./rest-route.js";

/** A route with the Connect handler that serves its method. */
export interface RouteEntry {
  readonly route: RestRoute;
  readonly handler: UniversalHandler;
}

export type RouteMatch =
  | { readonly kind: "found"; readonly entry: RouteEntry; readonly variables: BoundVariable[] }
  /** The path is known, but not for this HTTP method. */
  | { readonly kind: "method-not-allowed"; readonly allow: readonly string[] }
  | { readonly kind: "not-found" };

export interface RouteTable {
  /** Every route, most specific first. */
  readonly entries: readonly RouteEntry[];
  match(httpMethod: string, rawPath: string): RouteMatch;
}

/**
 * Builds the routes of every handler whose method has a `google.api.http`
 * rule. Throws on a broken rule or on two rules claiming the same method and
 * path, so a conflict fails at start-up instead of shadowing a route.
 */
export function createRouteTable(handlers: readonly UniversalHandler[]): RouteTable {
  const entries = handlers
    .flatMap((handler) => restRoutesOfMethod(handler.method).map((route) => ({ route, handler })))
    .sort((a, b) => compareTemplates(a.route.template, b.route.template));
  const seen = new Map<string, RestRoute>();
  for (const { route } of entries) {
    const key = `${route.httpMethod} ${templateShape(route.template)}`;
    const other = seen.get(key);
    if (other !== undefined) {
      throw new Error(
        `REST routes conflict: ${key} is bound by ${other.method.parent.typeName}.${other.method.name} and ${route.method.parent.typeName}.${route.method.name}`,
      );
    }
    seen.set(key, route);
  }
  return {
    entries,
    match(httpMethod, rawPath) {
      const allow = new Set<string>();
      for (const entry of entries) {
        const variables = matchPathTemplate(entry.route.template, rawPath);
        if (variables === undefined) {
          continue;
        }
        if (entry.route.httpMethod === httpMethod) {
          return { kind: "found", entry, variables };
        }
        allow.add(entry.route.httpMethod);
      }
      return allow.size > 0
        ? { kind: "method-not-allowed", allow: [...allow].sort() }
        : { kind: "not-found" };
    },
  };
}
