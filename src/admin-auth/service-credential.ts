/** The header a calling service presents its credential in (IntrospectToken, `/auth`). */
export const SERVICE_CREDENTIAL_HEADER = "x-service-credential";

/**
 * Says which calling service presents this secret, or undefined
 * (SERVICE_CREDENTIALS_FILE, loaded by service-credentials.ts).
 */
export type ServiceLookup = (secret: string) => string | undefined;

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
  services: ServiceLookup | undefined,
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
