import { connect } from "node:net";

export interface RawExchangeOptions {
  /** Half-close the connection after the bytes (the server sees the end of the request). Default false. */
  end?: boolean;
  /** A connection still open after this long fails the test. Default 5000 ms. */
  timeoutMs?: number;
}

/** Sends raw bytes on a new connection; resolves with all the server sent once it closes. */
export function rawExchange(
  baseUrl: string,
  bytes: string,
  opts: RawExchangeOptions = {},
): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  const timeoutMs = opts.timeoutMs ?? 5000;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      opts.end === true ? socket.end(bytes) : socket.write(bytes),
    );
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
    // The server closes the connection after a refusal; a hang fails the test.
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got: ${text}`));
    });
  });
}
