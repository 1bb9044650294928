/**
 * How the SDK's fetches treat redirects: not followed. A 307 or 308 keeps the
 * method and body, so following one would hand the signed request (usable
 * once, within minutes, by whoever receives it) to a host the caller never
 * named. "manual" rather than "error" so the answer can be recognised and
 * reported as a redirect instead of a vague network failure.
 */
export const REDIRECT_MODE: RequestInit["redirect"] = "manual";

function resolved(location: string, url: string): string {
  try {
    return new URL(location, url).href;
  } catch {
    return location;
  }
}

/**
 * The error message for an answer that is a redirect, or undefined when it is
 * not one. In Node the 3xx answer itself is seen, with its status and
 * `location`; a browser hides both behind an "opaqueredirect" response.
 */
export function redirectRefusal(res: Response, url: string): string | undefined {
  const opaque = res.type === "opaqueredirect";
  if (!opaque && (res.status < 300 || res.status > 399)) {
    return undefined;
  }
  const location = res.headers.get("location");
  const what = opaque ? "a redirect" : `HTTP ${res.status}`;
  const target = location === null ? "" : ` to ${resolved(location, url)}`;
  return (
    `refused to follow ${what} from ${url}${target}: the SDK never sends a signed request ` +
    "elsewhere; set baseUrl to the service's own URL"
  );
}
