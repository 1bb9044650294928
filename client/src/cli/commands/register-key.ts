import {
  ADMIN_CONNECTION_HELP,
  ADMIN_USER_HELP,
  KEY_OPTIONS,
  parseKeyCommandLine,
} from "../admin-command-line.js";
import type { Command } from "../cli-context.js";
import { EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { printResult } from "../print-result.js";
import { createUserKeyClient } from "../user-key-client.js";

const NAME = "register-key";

/** `register-key`: PutUserKey on the internal listener. */
export const registerKeyCommand: Command = {
  name: NAME,
  listener: "internal",
  options: KEY_OPTIONS,
  summary: "register a public key for a user (internal listener)",
  help: `Usage: perps-tokens register-key --user USER_ID (--public-key HEX | --key FILE)

Registers an Ed25519 public key for the user, on the internal listener, so that
requests signed with the matching private key are accepted. Idempotent; a user
has at most 5 keys.

Options:
${ADMIN_USER_HELP}
  --public-key HEX     the public key, 64 hex characters (as 'keygen' prints it)
  --key FILE           or: the private key file whose public key to register
${ADMIN_CONNECTION_HELP}

With --json: {"publicKey":"…","userId":"…"}

${EXIT_CODES_HELP}`,

  async run(args, ctx) {
    const { userId, publicKey, clientOptions } = await parseKeyCommandLine(NAME, args, ctx.env);
    await createUserKeyClient(await clientOptions()).putUserKey(userId, publicKey);
    printResult(ctx, `Registered public key ${publicKey} for user ${userId}.`, {
      publicKey,
      userId,
    });
    return ExitCode.Ok;
  },
};
