// What a forward-auth request asks beyond its bearer token: the scopes its
// route needs (`?scope=<s>`, repeatable, set in the edge proxy's recipe) and
// the address of the proxy's client (`X-Real-IP`, else the last address of
// `X-Forwarded-For`: the one the edge proxy itself saw). Read by the check
// lane and by the endpoint alike, so that both answer the same.

import type { IncomingHttpHeaders } from "node:http";
import { isTokenScope, scopeMask } from "@perps/token-client/protocol";

/** The scopes a route needs, or the first name that is no scope (the proxy's recipe is wrong). */
export type RouteScopes = { readonly mask: number } | { readonly unknown: string };

const NO_SCOPES: RouteScopes = Object.freeze({ mask: 0 });

/** The scopes named by the `scope` parameters of a request target's query. */
export function routeScopes(url: string): RouteScopes {
  const query = url.indexOf("?");
  if (query < 0 || !url.includes("scope=", query)) {
    return NO_SCOPES;
  }
  const names = new URLSearchParams(url.slice(query + 1)).getAll("scope");
  const unknown = names.find((name) => !isTokenScope(name));
  return unknown === undefined ? { mask: scopeMask(names) } : { unknown };
}

/** The client's address as the edge proxy passed it; undefined when it passed none. */
export function clientAddress(headers: IncomingHttpHeaders): string | undefined {
  const realIp = headers["x-real-ip"];
  if (typeof realIp === "string" && realIp !== "") {
    return realIp.trim();
  }
  const forwarded = headers["x-forwarded-for"];
  if (typeof forwarded !== "string" || forwarded === "") {
    return undefined;
  }
  const last = forwarded.slice(forwarded.lastIndexOf(",") + 1).trim();
  return last === "" ? undefined : last;
}
