import type { OperatorLookup } from "./admin-auth-interceptor.js";

/** The header a calling service presents its credential in (IntrospectToken, `/auth`). */
export const SERVICE_CREDENTIAL_HEADER = "x-service-credential";

/**
 * Who a calling service is, by its `X-Service-Credential` header value(s):
 * its name ("" when the check is off: anyone may call), or false when it is
 * refused (no header, the header twice, or a secret no service has).
 */
export type ServiceCredentialCheck = (
  value: string | readonly string[] | null | undefined,
) => string | false;

/**
 * The optional service credential of IntrospectToken and `/auth`: off
 * (every caller accepted, as "") without `services`; else the header must
 * hold the secret of one of them (SERVICE_CREDENTIALS_FILE, the format of
 * ADMIN_CREDENTIALS_FILE), compared in constant time. Standalone, so that
 * any path serving these calls asks the same question.
 */
export function serviceCredentialCheck(
  services: OperatorLookup | undefined,
): ServiceCredentialCheck {
  if (services === undefined) {
    return () => "";
  }
  return (value) => {
    const secret = typeof value === "string" ? value.trim() : undefined;
    if (secret === undefined || secret === "") {
      return false;
    }
    return services(secret) ?? false;
  };
}
