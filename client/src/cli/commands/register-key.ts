import type { Command } from "../cli-context.js";
import { COMMON_HELP, COMMON_OPTIONS, EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { OPERATOR_SECRET_HELP, secretOption } from "../operator-secret.js";
import { parseOptions, required } from "../parse-options.js";
import { printResult } from "../print-result.js";
import { resolvePublicKey } from "../public-key.js";
import { INTERNAL_URL_HELP, internalUrl } from "../service-urls.js";
import { createUserKeyClient } from "../user-key-client.js";

const NAME = "register-key";

const OPTIONS = {
  ...COMMON_OPTIONS,
  user: { type: "string" },
  "public-key": { type: "string" },
  key: { type: "string" },
  "internal-url": { type: "string" },
  "operator-secret-file": { type: "string" },
} as const;

/** `register-key`: PutUserKey on the internal listener. */
export const registerKeyCommand: Command = {
  name: NAME,
  listener: "internal",
  options: OPTIONS,
  summary: "register a public key for a user (internal listener)",
  help: `Usage: perps-tokens register-key --user USER_ID (--public-key HEX | --key FILE)

Registers an Ed25519 public key for the user, on the internal listener, so that
requests signed with the matching private key are accepted. Idempotent; a user
has at most 5 keys.

Options:
  --user USER_ID       the user's UUID
  --public-key HEX     the public key, 64 hex characters (as 'keygen' prints it)
  --key FILE           or: the private key file whose public key to register
${INTERNAL_URL_HELP}
${OPERATOR_SECRET_HELP}
${COMMON_HELP}

With --json: {"publicKey":"…","userId":"…"}

${EXIT_CODES_HELP}`,

  async run(args, ctx) {
    const values = parseOptions(NAME, args, OPTIONS);
    const userId = required(NAME, values.user, "--user");
    const baseUrl = internalUrl(NAME, values["internal-url"], ctx.env);
    const publicKey = await resolvePublicKey({
      command: NAME,
      publicKey: values["public-key"],
      keyFile: values.key,
    });
    await createUserKeyClient({
      baseUrl,
      ...(await secretOption(values["operator-secret-file"], ctx.env)),
    }).putUserKey(userId, publicKey);
    printResult(ctx, `Registered public key ${publicKey} for user ${userId}.`, {
      publicKey,
      userId,
    });
    return ExitCode.Ok;
  },
};
