/**
 * True for `application/json`, with any parameters, as long as a charset
 * parameter (if any) is UTF-8: the only encoding JSON allows (RFC 8259).
 */
export function isJsonMediaType(contentType: string | null | undefined): boolean {
  if (contentType == null) {
    return false;
  }
  const [type = "", ...params] = contentType.split(";");
  if (type.trim().toLowerCase() !== "application/json") {
    return false;
  }
  return params.every((param) => {
    const eq = param.indexOf("=");
    const name = param
      .slice(0, eq < 0 ? undefined : eq)
      .trim()
      .toLowerCase();
    if (name !== "charset") {
      return true;
    }
    const value = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .toLowerCase();
    return value === "utf-8" || value === "utf8";
  });
}
