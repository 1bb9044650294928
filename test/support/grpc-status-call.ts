import { connect } from "node:http2";

/**
 * One raw gRPC call over HTTP/2 (prior knowledge, `application/grpc`):
 * sends `body` as it is and resolves with the answer's `grpc-status`
 * trailer ("none" when the answer had none).
 */
export async function grpcStatusOf(
  baseUrl: string,
  path: string,
  body: Uint8Array,
  headers: Record<string, string> = {},
): Promise<string> {
  const session = connect(baseUrl);
  try {
    return await new Promise<string>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        ...headers,
      });
      let status = "none";
      stream.on("trailers", (t) => {
        status = String(t["grpc-status"]);
      });
      stream.on("data", () => {});
      stream.on("end", () => resolve(status));
      stream.on("error", reject);
      stream.end(body);
    });
  } finally {
    session.close();
  }
}
