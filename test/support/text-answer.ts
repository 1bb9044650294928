import type { IncomingMessage } from "node:http";

/** An HTTP/1.1 answer as a client reads it: its status and its whole body as text. */
export interface TextAnswer {
  status: number;
  body: string;
}

/** Reads the rest of `res` as UTF-8 text. */
export function textAnswer(res: IncomingMessage): Promise<TextAnswer> {
  return new Promise((resolve, reject) => {
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      body += chunk;
    });
    res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    res.on("error", reject);
  });
}
