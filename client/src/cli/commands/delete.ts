import type { Command } from "../cli-context.js";
import { closingClient } from "../closing-client.js";
import { EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { parseOptions, required } from "../parse-options.js";
import { printResult } from "../print-result.js";
import {
  PUBLIC_HELP,
  publicTokenClient,
  SIGNED_OPTIONS,
  SIGNER_HELP,
} from "../public-token-client.js";

const NAME = "delete";

const OPTIONS = {
  ...SIGNED_OPTIONS,
  "token-id": { type: "string" },
} as const;

/** `delete`: a signed DeleteToken on the public listener. */
export const deleteCommand: Command = {
  name: NAME,
  listener: "public",
  options: OPTIONS,
  summary: "delete a token (signed with your private key)",
  help: `Usage: perps-tokens delete --user USER_ID --key FILE --token-id ID

Deletes one of the user's tokens, signing the request with the private key in FILE.

Options:
${SIGNER_HELP}
  --token-id ID        the id that 'create' printed
${PUBLIC_HELP}

With --json: {"deleted":true,"tokenId":"…"}

${EXIT_CODES_HELP} An unknown, expired or
other user's token is NOT_FOUND (exit 1).`,

  async run(args, ctx) {
    const values = parseOptions(NAME, args, OPTIONS);
    const userId = required(NAME, values.user, "--user");
    const keyFile = required(NAME, values.key, "--key");
    const tokenId = required(NAME, values["token-id"], "--token-id");
    const client = await publicTokenClient(NAME, values, ctx.env, keyFile);
    return closingClient(client, async () => {
      await client.deleteToken({ userId, tokenId });
      printResult(ctx, `Deleted token ${tokenId}.`, { deleted: true, tokenId });
      return ExitCode.Ok;
    });
  },
};
