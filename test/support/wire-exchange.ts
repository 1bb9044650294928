import { request as http1Request, type IncomingHttpHeaders } from "node:http";
import { connect as http2Connect } from "node:http2";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";

// One request and its whole answer (status, headers, body, trailers) over
// HTTP/1.1 or HTTP/2, for comparing two servers' answers (connect-handler-parity.test.ts).

export const CREATE = `/${TokenService.typeName}/CreateToken`;

export interface Sent {
  readonly http2: boolean;
  readonly method?: string;
  readonly path?: string;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array | string;
}

export interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: Buffer;
  trailers: Record<string, unknown>;
}

/** Headers worth comparing: all but the date and HTTP/2's pseudo-headers. */
export function comparable(headers: IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => name !== "date" && !name.startsWith(":")),
  );
}

export function send(port: number, sent: Sent): Promise<Answer> {
  return sent.http2 ? send2(port, sent) : send1(port, sent);
}

export function send1(port: number, sent: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http1Request(
      {
        host: "127.0.0.1",
        port,
        method: sent.method ?? "POST",
        path: sent.path ?? CREATE,
        headers: sent.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: comparable(res.headers),
            body: Buffer.concat(chunks),
            trailers: { ...res.trailers },
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(sent.body);
  });
}

export function send2(port: number, sent: Sent): Promise<Answer> {
  const session = http2Connect(`http://127.0.0.1:${port}`);
  return new Promise<Answer>((resolve, reject) => {
    session.on("error", reject);
    const stream = session.request({
      ":method": sent.method ?? "POST",
      ":path": sent.path ?? CREATE,
      ...sent.headers,
    });
    let status = 0;
    let headers: Record<string, unknown> = {};
    let trailers: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      headers = comparable(h);
    });
    stream.on("trailers", (t) => {
      trailers = comparable(t);
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => resolve({ status, headers, body: Buffer.concat(chunks), trailers }));
    stream.on("error", reject);
    // Node ends a GET's stream at once (END_STREAM on its headers): it has no body to send.
    if (!stream.writableEnded) {
      stream.end(sent.body);
    }
  }).finally(() => session.close());
}
