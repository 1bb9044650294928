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
import { UsageError } from "../usage-error.js";

const NAME = "create";

const OPTIONS = {
  ...SIGNED_OPTIONS,
  name: { type: "string" },
  "expires-in": { type: "string" },
  scope: { type: "string", multiple: true },
  "allow-ip": { type: "string", multiple: true },
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
                           [--scope SCOPE]... [--allow-ip ADDRESS]...

Creates a bearer token for the user, signing the request with the private key
in FILE. The token is printed once: the service keeps only its hash.

Options:
${SIGNER_HELP}
  --name NAME          unique among the user's live tokens; required above 7 days;
                       without it the token is a session token
  --expires-in SECONDS lifetime (default on the service: 604800, 7 days)
  --scope SCOPE        what the token may do: read, trade, transfer, withdraw;
                       repeat for more (default on the service: read and trade)
  --allow-ip ADDRESS   an IPv4 or IPv6 address or CIDR prefix the token may be
                       used from; repeat for more (up to 20); withdraw needs one
${PUBLIC_HELP}

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
    const client = await publicTokenClient(NAME, values, ctx.env, keyFile);
    return closingClient(client, async () => {
      const created = await client.createToken({
        userId,
        ...(lifetime === undefined ? {} : { expiresIn: lifetime }),
        ...(values.name === undefined ? {} : { name: values.name }),
        ...(values.scope === undefined ? {} : { scopes: values.scope }),
        ...(values["allow-ip"] === undefined ? {} : { allowedIps: values["allow-ip"] }),
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
    });
  },
};
