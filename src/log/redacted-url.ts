/**
 * A URL as a log line or an error message may show it: its userinfo
 * (`user:password@`) and its query (where some collectors take an API key)
 * replaced by `[redacted]`. Works on text, so that a URL too broken to parse
 * (a configuration error) is redacted too.
 */
export function redactedUrl(raw: string): string {
  return raw
    .replace(/^([^/?#@]*\/\/)?[^/?#]*@/, (_all, scheme: string | undefined) => {
      return `${scheme ?? ""}[redacted]@`;
    })
    .replace(/\?[^#]*/, "?[redacted]");
}
