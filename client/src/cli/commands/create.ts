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
import { UsageError } from "../usage-error.js";

const NAME = "create";

const OPTIONS = {
  ...COMMON_OPTIONS,
  user: { type: "string" },
  key: { type: "string" },
  name: { type: "string" },
  "expires-in": { type: "string" },
  transport: { type: "string" },
  url: { type: "string" },
} as const;

function expiresIn(value: string | undefined): number | undefined {
  if (value === undefined) {
    return undefined;
  }
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0) {
    throw new UsageError(NAME, `--expires-in: must be a whole number of seconds > 0, not ${value}`);
  }
  return n;
}

/** `create`: a signed CreateToken on the public listener. */
export const createCommand: Command = {
  name: NAME,
  listener: "public",
  options: OPTIONS,
  summary: "create a bearer token (signed with your private key)",
  help: `Usage: perps-tokens create --user USER_ID --key FILE [--name NAME] [--expires-in SECONDS]

Creates a bearer token for the user, signing the request with the private key
in FILE. The token is printed once: the service keeps only its hash.

Options:
  --user USER_ID       the user's UUID, sent and signed as given
  --key FILE           private key: PKCS#8 PEM (from 'keygen' or OpenSSL) or 64 hex
  --name NAME          unique among the user's live tokens; required above 7 days;
                       without it the token is a session token
  --expires-in SECONDS lifetime (default on the service: 604800, 7 days)
${TRANSPORT_HELP}
${PUBLIC_URL_HELP}
${COMMON_HELP}

With --json: {"expiresAt":"YYYY-MM-DD","id":"…","token":"pt_…"}

If the service says this very request already created a token (its first
answer was lost), the error names that token's id (createdTokenId with --json):
its secret cannot be shown again; delete it to free the name.

${EXIT_CODES_HELP}`,

  async run(args, ctx) {
    const values = parseOptions(NAME, args, OPTIONS);
    const userId = required(NAME, values.user, "--user");
    const keyFile = required(NAME, values.key, "--key");
    const lifetime = expiresIn(values["expires-in"]);
    const transport = transportOption(NAME, values.transport);
    const baseUrl = publicUrl(NAME, values.url, ctx.env);
    const privateKey = await readPrivateKey(keyFile);
    const client = createTokenClient({ baseUrl, transport, signer: { privateKey } });
    try {
      const created = await client.createToken({
        userId,
        ...(lifetime === undefined ? {} : { expiresIn: lifetime }),
        ...(values.name === undefined ? {} : { name: values.name }),
      });
      const label = values.name === undefined ? "session token" : `token "${values.name}"`;
      printResult(
        ctx,
        `Created ${label} ${created.id}, expires ${created.expiresAt} (UTC).\n` +
          `${created.token}\n` +
          "Store the token now: it is not shown again.",
        { expiresAt: created.expiresAt, id: created.id, token: created.token },
      );
      return ExitCode.Ok;
    } finally {
      client.close();
    }
  },
};
