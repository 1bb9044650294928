import { Agent, request } from "node:http";

/**
 * Live tokens made through a side's own REST create (this service or the
 * peer): each side stores tokens its own way, so each must write its own.
 * 16 keep-alive connections; a create that does not answer 201 with a token
 * fails the run.
 */
export async function createTokensVia(
  baseUrl: string,
  bodies: readonly string[],
): Promise<string[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const url = new URL("/user/tokens", baseUrl);
  const createOne = (body: string) =>
    new Promise<string>((resolve, reject) => {
      const req = request(
        url,
        { method: "POST", agent, headers: { "content-type": "application/json" } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => {
            const token = /"token":"([^"]+)"/.exec(text)?.[1];
            if (res.statusCode === 201 && token !== undefined) {
              resolve(token);
            } else {
              reject(new Error(`create at ${baseUrl} answered ${res.statusCode}: ${text}`));
            }
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  try {
    const tokens: string[] = [];
    for (let i = 0; i < bodies.length; i += 64) {
      tokens.push(...(await Promise.all(bodies.slice(i, i + 64).map(createOne))));
    }
    return tokens;
  } finally {
    agent.destroy();
  }
}
