import {
  ADMIN_CONNECTION_HELP,
  ADMIN_OPTIONS,
  ADMIN_USER_HELP,
  parseAdminCommandLine,
} from "../admin-command-line.js";
import type { Command } from "../cli-context.js";
import { EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { keyListText } from "../key-list-text.js";
import { printResult } from "../print-result.js";
import { createUserKeyClient } from "../user-key-client.js";

const NAME = "list-keys";

/** `list-keys`: ListUserKeys on the internal listener. */
export const listKeysCommand: Command = {
  name: NAME,
  listener: "internal",
  options: ADMIN_OPTIONS,
  summary: "list a user's public keys (internal listener)",
  help: `Usage: perps-tokens list-keys --user USER_ID

Lists the Ed25519 public keys registered for the user, on the internal
listener, oldest first: when each was added (UTC; "unknown" for a key
registered before the service recorded it), its fingerprint (SHA256: and the
base64 SHA-256 of the 32 raw key bytes) and the key itself.

Options:
${ADMIN_USER_HELP}
${ADMIN_CONNECTION_HELP}

With --json: [{"publicKey":"…","fingerprint":"SHA256:…","addedAt":"…Z"}]
(addedAt null when unknown), [] when none.

${EXIT_CODES_HELP}`,

  async run(args, ctx) {
    const { userId, clientOptions } = parseAdminCommandLine(NAME, args, ADMIN_OPTIONS, ctx.env);
    const keys = await createUserKeyClient(await clientOptions()).listUserKeys(userId);
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
