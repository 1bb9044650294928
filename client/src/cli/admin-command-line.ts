import type { AdminClientOptions } from "./admin-service-client.js";
import { COMMON_HELP, COMMON_OPTIONS } from "./command-options.js";
import { OPERATOR_SECRET_HELP, secretOption } from "./operator-secret.js";
import { type OptionValues, parseOptions, required } from "./parse-options.js";
import { resolvePublicKey } from "./public-key.js";
import { INTERNAL_URL_HELP, internalUrl } from "./service-urls.js";

/** Options of every command that calls an admin RPC about one user on the internal listener. */
export const ADMIN_OPTIONS = {
  ...COMMON_OPTIONS,
  user: { type: "string" },
  "internal-url": { type: "string" },
  "operator-secret-file": { type: "string" },
} as const;

/** Help line of `--user` on an admin command. */
export const ADMIN_USER_HELP = "  --user USER_ID       the user's UUID";
/** Help lines of the listener and credential options of {@link ADMIN_OPTIONS}. */
export const ADMIN_CONNECTION_HELP = `${INTERNAL_URL_HELP}
${OPERATOR_SECRET_HELP}
${COMMON_HELP}`;

/** An admin command's line: its values, the user it is about, and its client's options. */
export interface AdminCommandLine<S extends typeof ADMIN_OPTIONS> {
  values: OptionValues<S>;
  userId: string;
  /** The admin client's options; reads the operator's secret, so call it when about to call. */
  clientOptions(): Promise<AdminClientOptions>;
}

/** Parses an admin command's arguments: `--user` is required, `--internal-url` checked. */
export function parseAdminCommandLine<S extends typeof ADMIN_OPTIONS>(
  command: string,
  args: string[],
  spec: S,
  env: Readonly<Record<string, string | undefined>>,
): AdminCommandLine<S> {
  const values = parseOptions(command, args, spec);
  // Read as ADMIN_OPTIONS: the conditional type of OptionValues<S> stays unresolved for a generic S.
  const admin: OptionValues<typeof ADMIN_OPTIONS> = values;
  const userId = required(command, admin.user, "--user");
  const baseUrl = internalUrl(command, admin["internal-url"], env);
  return {
    values,
    userId,
    clientOptions: async () => ({
      baseUrl,
      ...(await secretOption(admin["operator-secret-file"], env)),
    }),
  };
}

/** {@link ADMIN_OPTIONS} and the two ways to name one of the user's keys. */
export const KEY_OPTIONS = {
  ...ADMIN_OPTIONS,
  "public-key": { type: "string" },
  key: { type: "string" },
} as const;

/** A key command's line: the user, the public key it names, and its client's options. */
export interface KeyCommandLine {
  userId: string;
  publicKey: string;
  clientOptions(): Promise<AdminClientOptions>;
}

/** Parses a key command's arguments: an admin command's, and the key (`--public-key` or `--key`). */
export async function parseKeyCommandLine(
  command: string,
  args: string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<KeyCommandLine> {
  const { values, userId, clientOptions } = parseAdminCommandLine(command, args, KEY_OPTIONS, env);
  const publicKey = await resolvePublicKey({
    command,
    publicKey: values["public-key"],
    keyFile: values.key,
  });
  return { userId, publicKey, clientOptions };
}
