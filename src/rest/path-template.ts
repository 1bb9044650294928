/**
 * Path templates of google.api.HttpRule (google/api/http.proto):
 *
 *     Template = "/" Segments [ Verb ] ;
 *     Segments = Segment { "/" Segment } ;
 *     Segment  = "*" | "**" | LITERAL | Variable ;
 *     Variable = "{" FieldPath [ "=" Segments ] "}" ;
 *     FieldPath = IDENT { "." IDENT } ;
 *     Verb     = ":" LITERAL ;
 */

/** One segment of a template; variables are flattened into their segments. */
export type TemplateSegment =
  | { readonly kind: "literal"; readonly value: string }
  | { readonly kind: "single" }
  | { readonly kind: "multi" };

/** A variable binds the path segments [start, end) to a request field. */
export interface TemplateVariable {
  /** Field path in proto names, e.g. ["item", "id"] for `{item.id}`. */
  readonly fieldPath: readonly string[];
  readonly start: number;
  /** Exclusive; a variable ending in `**` extends to the end of the path. */
  readonly end: number;
}

export interface PathTemplate {
  /** The template as written in the rule, e.g. `/v1/{name=shelves/*}:cancel`. */
  readonly source: string;
  readonly segments: readonly TemplateSegment[];
  readonly variables: readonly TemplateVariable[];
  /** Custom verb without the colon, e.g. `cancel`. */
  readonly verb: string | undefined;
}

/** A variable's matched text, still percent-encoded (see decodeVariable). */
export interface BoundVariable {
  readonly fieldPath: readonly string[];
  readonly raw: string;
  /** Spans several segments (`{var=a/*}`, `{var=**}`): "%2F" stays encoded. */
  readonly multiSegment: boolean;
}

const identRe = /^[A-Za-z_][A-Za-z0-9_]*$/;
// RFC 3986 pchar without ":" (it introduces the verb), or a percent-escape.
const literalRe = /^(?:[A-Za-z0-9\-._~!$&'()+,;=@]|%[0-9A-Fa-f]{2})+$/;

/** Parses a path template; throws an Error naming the template when it is malformed. */
export function parsePathTemplate(source: string): PathTemplate {
  const fail = (why: string): never => {
    throw new Error(`invalid path template "${source}": ${why}`);
  };
  if (!source.startsWith("/")) {
    fail("must start with /");
  }
  const { path, verb } = splitVerb(source, fail);
  const segments: TemplateSegment[] = [];
  const variables: TemplateVariable[] = [];
  // Split at "/" outside braces; a variable may hold several segments.
  for (const part of splitOutsideBraces(path.slice(1), fail)) {
    if (part.startsWith("{")) {
      if (!part.endsWith("}")) {
        fail(`bad variable ${part}`);
      }
      const inner = part.slice(1, -1);
      const eq = inner.indexOf("=");
      const fieldPath = (eq < 0 ? inner : inner.slice(0, eq)).split(".");
      if (!fieldPath.every((p) => identRe.test(p))) {
        fail(`bad field path in ${part}`);
      }
      const start = segments.length;
      const sub = eq < 0 ? "*" : inner.slice(eq + 1);
      for (const s of sub.split("/")) {
        if (s.includes("{") || s.includes("}")) {
          fail("variables must not nest");
        }
        segments.push(plainSegment(s, fail));
      }
      variables.push({ fieldPath, start, end: segments.length });
    } else {
      segments.push(plainSegment(part, fail));
    }
  }
  const multi = segments.findIndex((s) => s.kind === "multi");
  if (multi >= 0 && multi !== segments.length - 1) {
    fail("** must be the last segment");
  }
  const names = variables.map((v) => v.fieldPath.join("."));
  if (new Set(names).size !== names.length) {
    fail("a field is bound twice");
  }
  return { source, segments, variables, verb };
}

function splitVerb(source: string, fail: (why: string) => never): { path: string; verb?: string } {
  // The verb is a ":" after the last "/" that is outside braces.
  let depth = 0;
  let lastSlash = -1;
  let colon = -1;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "{") depth++;
    else if (c === "}") depth--;
    else if (depth === 0 && c === "/") {
      lastSlash = i;
      colon = -1;
    } else if (depth === 0 && c === ":" && colon < 0 && i > lastSlash) colon = i;
  }
  if (depth !== 0) {
    fail("unbalanced braces");
  }
  if (colon < 0) {
    return { path: source };
  }
  const verb = source.slice(colon + 1);
  if (!literalRe.test(verb)) {
    fail(`bad verb "${verb}"`);
  }
  return { path: source.slice(0, colon), verb };
}

function splitOutsideBraces(path: string, fail: (why: string) => never): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const c of path) {
    if (c === "{") depth++;
    if (c === "}") depth--;
    if (depth > 1) {
      fail("variables must not nest");
    }
    if (c === "/" && depth === 0) {
      parts.push(current);
      current = "";
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

function plainSegment(s: string, fail: (why: string) => never): TemplateSegment {
  if (s === "*") return { kind: "single" };
  if (s === "**") return { kind: "multi" };
  if (!literalRe.test(s)) {
    fail(`bad segment "${s}"`);
  }
  return { kind: "literal", value: safeDecode(s) ?? fail(`bad percent-encoding in "${s}"`) };
}

/**
 * Matches a raw (still percent-encoded) URL path, without query, against the
 * template. Returns the bound variables, or undefined when the path does not
 * match.
 */
export function matchPathTemplate(
  template: PathTemplate,
  rawPath: string,
): BoundVariable[] | undefined {
  if (!rawPath.startsWith("/")) {
    return undefined;
  }
  let path = rawPath.slice(1);
  if (template.verb !== undefined) {
    const suffix = `:${template.verb}`;
    if (!path.endsWith(suffix)) {
      return undefined;
    }
    path = path.slice(0, -suffix.length);
  }
  const raw = path.split("/");
  const segs = template.segments;
  const hasMulti = segs.length > 0 && segs[segs.length - 1]?.kind === "multi";
  if (hasMulti ? raw.length < segs.length - 1 : raw.length !== segs.length) {
    return undefined;
  }
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i];
    const part = raw[i];
    if (seg === undefined || seg.kind === "multi") {
      break;
    }
    if (part === undefined || part === "") {
      return undefined;
    }
    if (seg.kind === "literal" && safeDecode(part) !== seg.value) {
      return undefined;
    }
  }
  return template.variables.map((v) => {
    const multi = v.end - v.start !== 1 || segs[v.start]?.kind !== "single";
    const end = v.end === segs.length && hasMulti ? raw.length : v.end;
    return { fieldPath: v.fieldPath, raw: raw.slice(v.start, end).join("/"), multiSegment: multi };
  });
}

/**
 * Percent-decodes a variable per http.proto: fully for a single segment,
 * all but "%2F"/"%2f" for several segments (so an encoded slash stays
 * distinguishable from a separator). Throws URIError on malformed encoding.
 */
export function decodeVariable(v: BoundVariable): string {
  if (!v.multiSegment) {
    return decodeURIComponent(v.raw);
  }
  return v.raw
    .split(/(%2[Ff])/)
    .map((part, i) => (i % 2 === 1 ? part : decodeURIComponent(part)))
    .join("");
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/**
 * Orders templates from most to least specific so the first match wins:
 * literals before `*` before `**`, segment by segment; then templates with a
 * custom verb (a verb-less template would capture ":verb" in its last variable).
 */
export function compareTemplates(a: PathTemplate, b: PathTemplate): number {
  const rank = (s: TemplateSegment | undefined): number =>
    s === undefined ? -1 : s.kind === "literal" ? 0 : s.kind === "single" ? 1 : 2;
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const d = rank(a.segments[i]) - rank(b.segments[i]);
    if (d !== 0) {
      return d;
    }
  }
  return (a.verb === undefined ? 1 : 0) - (b.verb === undefined ? 1 : 0);
}

/** A key equal for templates that match the same paths (variable names aside). */
export function templateShape(template: PathTemplate): string {
  const segs = template.segments.map((s) =>
    s.kind === "literal" ? encodeURIComponent(s.value) : s.kind === "single" ? "*" : "**",
  );
  return `/${segs.join("/")}${template.verb === undefined ? "" : `:${template.verb}`}`;
}
