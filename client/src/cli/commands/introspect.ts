import { createIntrospectionClient } from "../../sdk/introspection-client.js";
import { bearerToken, TOKEN_ENV_HELP } from "../bearer-token.js";
import type { Command } from "../cli-context.js";
import { closingClient } from "../closing-client.js";
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  INTROSPECTION_TRANSPORT_HELP,
  introspectionTransportOption,
} from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { introspectionText } from "../introspection-text.js";
import { parseCommandLine } from "../parse-options.js";
import { printResult } from "../print-result.js";
import { INTERNAL_URL_HELP, internalUrl } from "../service-urls.js";

const NAME = "introspect";

const OPTIONS = {
  ...COMMON_OPTIONS,
  transport: { type: "string" },
  "internal-url": { type: "string" },
} as const;

/** `introspect`: IntrospectToken on the internal listener. */
export const introspectCommand: Command = {
  name: NAME,
  listener: "internal",
  options: OPTIONS,
  summary: "check whether a token is live, and whose it is (internal listener)",
  help: `Usage: perps-tokens introspect [TOKEN]

Asks the internal listener whether TOKEN is live (not expired, not deleted)
and, if so, whose it is: user, token id, name, exact expiry. Never prints the
token.

Options:
${INTROSPECTION_TRANSPORT_HELP}
${INTERNAL_URL_HELP}
${COMMON_HELP}

${TOKEN_ENV_HELP}

With --json: {"active":true,"userId":"…","tokenId":"…","name":"…",
"expiresAt":"YYYY-MM-DD","expiresAtMs":…,"scopes":["read","trade"]}; a token
that is not live is {"active":false,"userId":"","tokenId":"","name":"",
"expiresAt":"","expiresAtMs":0,"scopes":[]}.

Exit codes: 0 the token is live, 3 it is not (malformed, unknown, expired or
deleted; the answer is printed all the same), 1 the service could not answer
(or could not be reached), 2 wrong command line.`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(NAME, args, OPTIONS, 1);
    const token = bearerToken(NAME, positionals[0], "the argument TOKEN", ctx.env);
    const transport = introspectionTransportOption(NAME, values.transport);
    const baseUrl = internalUrl(NAME, values["internal-url"], ctx.env);
    return closingClient(createIntrospectionClient({ baseUrl, transport }), async (client) => {
      const answer = await client.introspectToken(token);
      printResult(ctx, introspectionText(answer), { ...answer });
      return answer.active ? ExitCode.Ok : ExitCode.Inactive;
    });
  },
};
