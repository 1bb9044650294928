import type { IncomingHttpHeaders } from "node:http";

/**
 * A request's headers as WHATWG `Headers`, as Connect gives them to
 * interceptors: without HTTP/2 pseudo-headers, nor the names `skip` says.
 */
export function webHeaders(
  headers: IncomingHttpHeaders,
  skip?: (name: string) => boolean,
): Headers {
  const header = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(":") || value === undefined || skip?.(name) === true) {
      continue;
    }
    if (Array.isArray(value)) {
      for (const v of value) {
        header.append(name, v);
      }
    } else {
      header.append(name, value);
    }
  }
  return header;
}

/**
 * Headers for node's `writeHead`, `respond` or trailers: `header`'s, but for
 * the names `skip` says, added to `into` (a record of the caller's own, not
 * copied) and returned.
 */
export function nodeHeaders<T extends Record<string, string | number> = Record<string, string>>(
  header: Headers | undefined,
  into: T = {} as T,
  skip?: (name: string) => boolean,
): T {
  header?.forEach((value, name) => {
    if (skip?.(name) !== true) {
      (into as Record<string, string | number>)[name] = value;
    }
  });
  return into;
}

/** A request header's value as Connect reads it (one string, or null). */
export function stringOrNull(value: string | string[] | undefined): string | null {
  return typeof value === "string" ? value : null;
}
