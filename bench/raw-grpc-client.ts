import { type ClientHttp2Session, connect, constants } from "node:http2";
import { grpcMessageLength } from "./grpc-frame.js";

export interface RawGrpcClientOptions {
  /** host:port of an h2c (cleartext HTTP/2) gRPC listener. */
  address: string;
  /** Full method path, e.g. /perps.token.v1.TokenIntrospectionService/IntrospectToken. */
  path: string;
  /** HTTP/2 connections the calls are spread over, in turn. */
  connections: number;
}

/**
 * How a call ended: the answer's message length when it succeeded
 * (grpc-status 0, one whole message), else a failure label (`grpc-<status>`,
 * `http-<status>` or `transport`).
 */
export type RawCallDone = (failure: string | undefined, messageLength: number) => void;

export interface RawGrpcClient {
  /** Sends one pre-framed unary request (grpcFrame). */
  call(frame: Buffer, done: RawCallDone): void;
  close(): void;
}

/**
 * A unary gRPC client on bare node:http2: the request's headers and frame
 * are written as they are, the answer's frames collected and its trailers
 * read. It costs a fraction of @grpc/grpc-js' CPU per call (no channel,
 * filters, deadlines or protobuf), so on a machine the service shares the
 * load generator takes less from it.
 */
export async function connectRawGrpc(opts: RawGrpcClientOptions): Promise<RawGrpcClient> {
  const sessions: ClientHttp2Session[] = await Promise.all(
    Array.from(
      { length: opts.connections },
      () =>
        new Promise<ClientHttp2Session>((resolve, reject) => {
          const session = connect(`http://${opts.address}`);
          session.once("connect", () => resolve(session));
          session.once("error", reject);
        }),
    ),
  );
  for (const session of sessions) {
    // A failed session fails its streams; the calls report that.
    session.on("error", () => {});
  }
  const headers = {
    [constants.HTTP2_HEADER_METHOD]: "POST",
    [constants.HTTP2_HEADER_PATH]: opts.path,
    [constants.HTTP2_HEADER_CONTENT_TYPE]: "application/grpc",
    te: "trailers",
  };
  let turn = 0;
  return {
    call(frame, done) {
      const session = sessions[turn++ % sessions.length];
      if (session === undefined || session.closed || session.destroyed) {
        done("transport", 0);
        return;
      }
      const stream = session.request(headers);
      const chunks: Buffer[] = [];
      let httpStatus = 0;
      let grpcStatus: string | undefined;
      stream.on("response", (answer) => {
        httpStatus = Number(answer[constants.HTTP2_HEADER_STATUS]);
        // Trailers-only answers (errors) carry grpc-status in the headers.
        const status = answer["grpc-status"];
        if (typeof status === "string") {
          grpcStatus = status;
        }
      });
      stream.on("trailers", (trailers) => {
        const status = trailers["grpc-status"];
        if (typeof status === "string") {
          grpcStatus = status;
        }
      });
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", () => {});
      stream.on("close", () => {
        if (httpStatus !== 200) {
          done(httpStatus === 0 ? "transport" : `http-${httpStatus}`, 0);
          return;
        }
        if (grpcStatus !== "0") {
          done(`grpc-${grpcStatus ?? "missing"}`, 0);
          return;
        }
        const length = grpcMessageLength(
          chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks),
        );
        if (length === undefined) {
          done("malformed", 0);
          return;
        }
        done(undefined, length);
      });
      stream.end(frame);
    },
    close() {
      for (const session of sessions) {
        session.close();
      }
    },
  };
}
