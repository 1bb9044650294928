import type { Command } from "../cli-context.js";
import { COMMON_HELP, COMMON_OPTIONS, EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { keyListText } from "../key-list-text.js";
import { OPERATOR_SECRET_HELP, secretOption } from "../operator-secret.js";
import { parseOptions, required } from "../parse-options.js";
import { printResult } from "../print-result.js";
import { INTERNAL_URL_HELP, internalUrl } from "../service-urls.js";
import { createUserKeyClient } from "../user-key-client.js";

const NAME = "list-keys";

const OPTIONS = {
  ...COMMON_OPTIONS,
  user: { type: "string" },
  "internal-url": { type: "string" },
  "operator-secret-file": { type: "string" },
} as const;

/** `list-keys`: ListUserKeys on the internal listener. */
export const listKeysCommand: Command = {
  name: NAME,
  listener: "internal",
  options: OPTIONS,
  summary: "list a user's public keys (internal listener)",
  help: `Usage: perps-tokens list-keys --user USER_ID

Lists the Ed25519 public keys registered for the user, on the internal
listener, oldest first: when each was added (UTC; "unknown" for a key
registered before the service recorded it), its fingerprint (SHA256: and the
base64 SHA-256 of the 32 raw key bytes) and the key itself.

Options:
  --user USER_ID       the user's UUID
${INTERNAL_URL_HELP}
${OPERATOR_SECRET_HELP}
${COMMON_HELP}

With --json: [{"publicKey":"…","fingerprint":"SHA256:…","addedAt":"…Z"}]
(addedAt null when unknown), [] when none.

${EXIT_CODES_HELP}`,

  async run(args, ctx) {
    const values = parseOptions(NAME, args, OPTIONS);
    const userId = required(NAME, values.user, "--user");
    const baseUrl = internalUrl(NAME, values["internal-url"], ctx.env);
    const keys = await createUserKeyClient({
      baseUrl,
      ...(await secretOption(values["operator-secret-file"], ctx.env)),
    }).listUserKeys(userId);
    printResult(
      ctx,
      keyListText(keys),
      keys.map((key) => ({
        publicKey: key.publicKey,
        fingerprint: key.fingerprint,
        addedAt: key.addedAtMs === undefined ? null : new Date(key.addedAtMs).toISOString(),
      })),
    );
    return ExitCode.Ok;
  },
};
