import { createTokenClient } from "../../sdk/token-client.js";
import type { Command } from "../cli-context.js";
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  EXIT_CODES_HELP,
  TRANSPORT_HELP,
  transportOption,
} from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { readPrivateKey } from "../key-file.js";
import { parseOptions, required } from "../parse-options.js";
import { printResult } from "../print-result.js";
import { PUBLIC_URL_HELP, publicUrl } from "../service-urls.js";

const NAME = "delete";

const OPTIONS = {
  ...COMMON_OPTIONS,
  user: { type: "string" },
  key: { type: "string" },
  "token-id": { type: "string" },
  transport: { type: "string" },
  url: { type: "string" },
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
  --user USER_ID       the user's UUID, sent and signed as given
  --key FILE           private key: PKCS#8 PEM (from 'keygen' or OpenSSL) or 64 hex
  --token-id ID        the id that 'create' printed
${TRANSPORT_HELP}
${PUBLIC_URL_HELP}
${COMMON_HELP}

With --json: {"deleted":true,"tokenId":"…"}

${EXIT_CODES_HELP} An unknown, expired or
other user's token is NOT_FOUND (exit 1).`,

  async run(args, ctx) {
    const values = parseOptions(NAME, args, OPTIONS);
    const userId = required(NAME, values.user, "--user");
    const keyFile = required(NAME, values.key, "--key");
    const tokenId = required(NAME, values["token-id"], "--token-id");
    const transport = transportOption(NAME, values.transport);
    const baseUrl = publicUrl(NAME, values.url, ctx.env);
    const privateKey = await readPrivateKey(keyFile);
    const client = createTokenClient({ baseUrl, transport, signer: { privateKey } });
    try {
      await client.deleteToken({ userId, tokenId });
      printResult(ctx, `Deleted token ${tokenId}.`, { deleted: true, tokenId });
      return ExitCode.Ok;
    } finally {
      client.close();
    }
  },
};
