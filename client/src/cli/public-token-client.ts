import { createTokenClient, type TokenClient } from "../sdk/token-client.js";
import { COMMON_HELP, COMMON_OPTIONS, TRANSPORT_HELP, transportOption } from "./command-options.js";
import { readPrivateKey } from "./key-file.js";
import type { OptionValues } from "./parse-options.js";
import { PUBLIC_URL_HELP, publicUrl } from "./service-urls.js";

/** Options of every command that calls TokenService on the public listener. */
export const PUBLIC_OPTIONS = {
  ...COMMON_OPTIONS,
  transport: { type: "string" },
  url: { type: "string" },
} as const;

/** Help lines of {@link PUBLIC_OPTIONS}. */
export const PUBLIC_HELP = `${TRANSPORT_HELP}
${PUBLIC_URL_HELP}
${COMMON_HELP}`;

/** {@link PUBLIC_OPTIONS} and the user's signing key, for the signed calls. */
export const SIGNED_OPTIONS = {
  ...PUBLIC_OPTIONS,
  user: { type: "string" },
  key: { type: "string" },
} as const;

/** Help lines of what {@link SIGNED_OPTIONS} adds. */
export const SIGNER_HELP = `  --user USER_ID       the user's UUID, sent and signed as given
  --key FILE           private key: PKCS#8 PEM (from 'keygen' or OpenSSL) or 64 hex`;

/**
 * The TokenService client the command line asks for (`--transport`, `--url`),
 * signing with the private key in `keyFile` when there is one.
 */
export async function publicTokenClient(
  command: string,
  values: OptionValues<typeof PUBLIC_OPTIONS>,
  env: Readonly<Record<string, string | undefined>>,
  keyFile?: string,
): Promise<TokenClient> {
  const transport = transportOption(command, values.transport);
  const baseUrl = publicUrl(command, values.url, env);
  if (keyFile === undefined) {
    return createTokenClient({ baseUrl, transport });
  }
  const privateKey = await readPrivateKey(keyFile);
  return createTokenClient({ baseUrl, transport, signer: { privateKey } });
}
