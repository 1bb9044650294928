import {
  ADMIN_CONNECTION_HELP,
  ADMIN_USER_HELP,
  KEY_OPTIONS,
  parseKeyCommandLine,
} from "../admin-command-line.js";
import type { Command } from "../cli-context.js";
import { EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { liveTokensText } from "../live-tokens-text.js";
import { printResult } from "../print-result.js";
import { createUserKeyClient } from "../user-key-client.js";

const NAME = "delete-key";

/** `delete-key`: DeleteUserKey on the internal listener. */
export const deleteKeyCommand: Command = {
  name: NAME,
  listener: "internal",
  options: KEY_OPTIONS,
  summary: "remove a public key of a user (internal listener)",
  help: `Usage: perps-tokens delete-key --user USER_ID (--public-key HEX | --key FILE)

Removes an Ed25519 public key of the user, on the internal listener: requests
signed with the matching private key are refused from then on. Removing a
registered key also revokes every live token of the user, named and session
(a key is usually removed because it leaked, and any token may have been
created with it): create new ones with a key that stays. Idempotent: removing
a key that is not registered succeeds too, and revokes nothing.

Options:
${ADMIN_USER_HELP}
  --public-key HEX     the public key, 64 hex characters
  --key FILE           or: the private key file whose public key to remove
${ADMIN_CONNECTION_HELP}

With --json: {"deleted":true,"publicKey":"…","userId":"…","revokedTokens":N}

${EXIT_CODES_HELP}`,

  async run(args, ctx) {
    const { userId, publicKey, clientOptions } = await parseKeyCommandLine(NAME, args, ctx.env);
    const revokedTokens = await createUserKeyClient(await clientOptions()).deleteUserKey(
      userId,
      publicKey,
    );
    printResult(
      ctx,
      `Removed public key ${publicKey} of user ${userId} (if it was registered); revoked ${liveTokensText(revokedTokens)} of the user.`,
      { deleted: true, publicKey, userId, revokedTokens },
    );
    return ExitCode.Ok;
  },
};
