import { Code, durationText, TokenApiError } from "@perps/token-client";

/** What the SDK's own checks of a key file start their messages with. */
const KEY_FILE_PREFIX = /^cryptoKeyFromPem: /;

/** A hint after the service's message, for the refusals a person can do something about. */
function hint(err: TokenApiError): string {
  if (err.code === Code.Unauthenticated && err.message === "Signature expired") {
    const off =
      err.clockOffsetMs === undefined
        ? "more than 2 minutes off"
        : `${durationText(err.clockOffsetMs)} ${err.clockOffsetMs > 0 ? "ahead of" : "behind"}`;
    return ` (this device's clock is ${off} the service's: set it right and try again)`;
  }
  if (err.code === Code.Unauthenticated && err.message === "Invalid signature") {
    return " (this key is not registered for this User ID)";
  }
  if (err.code === Code.ResourceExhausted && err.retryAfterSeconds !== undefined) {
    return ` (retry after ${err.retryAfterSeconds} s)`;
  }
  if (err.code === Code.Unavailable && err.httpStatus === undefined) {
    // No answer at all (a 503 comes with the service's own words).
    return " (no answer: check the connection, or try again in a moment)";
  }
  return "";
}

const DAY_SECONDS = 86_400;

/**
 * The service names request fields as the API spells them (`expiresIn: must
 * be at most 31536000 seconds`); the form calls them Name, Lifetime (in
 * days), Scopes and Allowed addresses. Each `; `-joined part about one of
 * the form's fields is said in its words; any other part stays the
 * service's.
 */
function inFormWords(message: string): string {
  return message
    .split("; ")
    .map((part) => {
      const most = /^expiresIn: must be at most (\d+) seconds$/.exec(part);
      if (most?.[1] !== undefined) {
        const seconds = Number(most[1]);
        const days = Math.floor(seconds / DAY_SECONDS);
        return days >= 1 && seconds % DAY_SECONDS === 0
          ? `Lifetime: at most ${days} day${days === 1 ? "" : "s"}`
          : `Lifetime: at most ${seconds} seconds (${(seconds / DAY_SECONDS).toFixed(2)} days)`;
      }
      if (part.startsWith("expiresIn: ")) {
        return `Lifetime: ${part.slice("expiresIn: ".length)}`;
      }
      if (part === "name: a live token of this user already has this name") {
        return "Name: one of your live tokens already has this name";
      }
      const entry = /^allowedIps\[(\d+)\]: (.*)$/.exec(part);
      if (entry?.[1] !== undefined) {
        return `Allowed addresses, entry ${Number(entry[1]) + 1}: ${entry[2]}`;
      }
      if (part.startsWith("allowedIps: ")) {
        return `Allowed addresses: ${part.slice("allowedIps: ".length)}`;
      }
      const scope = /^scopes(?:\[\d+\])?: (.*)$/.exec(part);
      if (scope?.[1] !== undefined) {
        return `Scopes: ${scope[1]}`;
      }
      if (part.startsWith("name: ")) {
        return `Name: ${part.slice("name: ".length)}`;
      }
      return part;
    })
    .join("; ");
}

/**
 * The text an error is shown as: the service's own message with a hint, the
 * key file's problem as the SDK names it, or the browser's message; never a
 * stack trace.
 */
export function errorText(err: unknown): string {
  if (err instanceof TokenApiError) {
    const message =
      err.code === Code.InvalidArgument || err.code === Code.AlreadyExists
        ? inFormWords(err.message)
        : err.message;
    return `${message}${hint(err)}`;
  }
  if (err instanceof TypeError && KEY_FILE_PREFIX.test(err.message)) {
    return `Private key: ${err.message.replace(KEY_FILE_PREFIX, "")}`;
  }
  if (err instanceof Error && err.name === "DataError") {
    // WebCrypto refused bytes that the SDK's checks accepted.
    return `Private key: this browser cannot import it (${err.message})`;
  }
  if (err instanceof Error && err.name === "NotSupportedError") {
    return "This browser cannot sign with Ed25519 keys (WebCrypto): use a current Chrome, Edge, Firefox or Safari";
  }
  return err instanceof Error ? err.message : String(err);
}
