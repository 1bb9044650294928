import type { DescField } from "@bufbuild/protobuf";
import type { TemplateSegment } from "../../src/rest/path-template.js";
import type { RestRoute } from "../../src/rest/rest-route.js";

/** A path parameter of an OpenAPI path. */
export interface OpenApiPathParam {
  /** The name in the OpenAPI path: the field path in JSON names, e.g. `item.id`. */
  readonly name: string;
  /** The bound field path; undefined for an anonymous `*` or `**`. */
  readonly fields: readonly DescField[] | undefined;
  /**
   * Set when the variable spans several segments (`{name=shelves/*}`,
   * `{path=**}`): a regular expression for its value, slashes included.
   */
  readonly multiSegmentPattern: string | undefined;
  /** The variable's segments as written in the template, e.g. `shelves/*`. */
  readonly segments: string;
}

export interface OpenApiPath {
  /** E.g. `/v1/shelves/{shelf}/items/{item.id}:cancel`. */
  readonly path: string;
  readonly params: readonly OpenApiPathParam[];
}

// RFC 3986 pchar characters that need no escaping in a literal segment.
const plainLiteral = /[^A-Za-z0-9\-._~!$&'()+,;=@]/gu;

/**
 * The OpenAPI path of a route's template: each variable becomes one `{name}`
 * (OpenAPI has no multi-segment parameters, so a variable such as
 * `{name=shelves/*}` is one parameter whose value holds the slashes), and
 * anonymous `*` and `**` segments become parameters `wildcard1`, `wildcard2`, ...
 */
export function openApiPathOf(route: RestRoute): OpenApiPath {
  const { segments, variables } = route.template;
  const parts: string[] = [];
  const params: OpenApiPathParam[] = [];
  const boundNames = new Set(route.pathFields.map(jsonPath));
  let wildcards = 0;
  let i = 0;
  while (i < segments.length) {
    const v = variables.findIndex((variable) => variable.start === i);
    const variable = variables[v];
    const fields = route.pathFields[v];
    if (variable !== undefined && fields !== undefined) {
      const own = segments.slice(variable.start, variable.end);
      const multi = own.length !== 1 || own[0]?.kind !== "single";
      const name = jsonPath(fields);
      params.push({
        name,
        fields,
        multiSegmentPattern: multi ? patternOf(own) : undefined,
        segments: own.map(segmentText).join("/"),
      });
      parts.push(`{${name}}`);
      i = variable.end;
      continue;
    }
    const segment = segments[i];
    if (segment?.kind === "literal") {
      parts.push(segment.value.replace(plainLiteral, (c) => encodeURIComponent(c)));
    } else if (segment !== undefined) {
      let name: string;
      do {
        wildcards++;
        name = `wildcard${wildcards}`;
      } while (boundNames.has(name));
      params.push({
        name,
        fields: undefined,
        multiSegmentPattern: segment.kind === "multi" ? patternOf([segment]) : undefined,
        segments: segmentText(segment),
      });
      parts.push(`{${name}}`);
    }
    i++;
  }
  const verb = route.template.verb === undefined ? "" : `:${route.template.verb}`;
  return { path: `/${parts.join("/")}${verb}`, params };
}

/** The path with parameter names blanked: OpenAPI treats paths of one shape as the same path. */
export function pathShape(path: string): string {
  return path.replace(/\{[^}]*\}/g, "{}");
}

function jsonPath(fields: readonly DescField[]): string {
  return fields.map((f) => f.jsonName).join(".");
}

function segmentText(segment: TemplateSegment): string {
  return segment.kind === "literal" ? segment.value : segment.kind === "single" ? "*" : "**";
}

function patternOf(segments: readonly TemplateSegment[]): string {
  const parts = segments.map((s) =>
    s.kind === "literal"
      ? s.value.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")
      : s.kind === "single"
        ? "[^/]+"
        : ".*",
  );
  return `^${parts.join("/")}$`;
}
