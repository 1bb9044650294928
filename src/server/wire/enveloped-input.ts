import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Compression,
  pipe,
  type Serialization,
  transformDecompressEnvelope,
  transformParseEnvelope,
  transformSplitEnvelope,
} from "@connectrpc/connect/protocol";
import { type BodySource, joined, type RequestBody, replay } from "../../http/request-body.js";
import { inputError } from "./input-error.js";
import { ENVELOPE_HEAD_BYTES } from "./unary-method.js";

/** What the unary input of a gRPC or gRPC-Web request is read with. */
export interface EnvelopedInput {
  /** The method's request serialization (Connect's, with its size limit). */
  readonly parse: Serialization<Message>;
  readonly readMaxBytes: number;
  /** The request's negotiated `grpc-encoding`; null for identity. */
  readonly compression: Compression | null;
  /** The flag of an envelope that is not a message (gRPC-Web's trailers); undefined for gRPC. */
  readonly endFlag: number | undefined;
}

/**
 * The one message of a unary gRPC or gRPC-Web request. The common case, one
 * uncompressed envelope within the limit, is decoded straight from the bytes
 * read, at once; anything else (compressed, several envelopes, cut short,
 * over the limit) goes through Connect's own envelope transforms, so it is
 * refused in Connect's words. Throws, or rejects, with the error to answer
 * (see `inputError`).
 */
export function readEnvelopedInput(
  body: RequestBody,
  req: BodySource,
  input: EnvelopedInput,
): Message | Promise<Message> {
  const bytes = body.ended ? singleMessage(body, input.readMaxBytes) : undefined;
  if (bytes === undefined) {
    return viaTransforms(body, req, input);
  }
  try {
    return input.parse.parse(bytes);
  } catch (reason) {
    throw inputError(reason);
  }
}

async function viaTransforms(
  body: RequestBody,
  req: BodySource,
  input: EnvelopedInput,
): Promise<Message> {
  try {
    return await onlyMessage(
      pipe(
        replay(body, req),
        transformSplitEnvelope(input.readMaxBytes),
        transformDecompressEnvelope(input.compression, input.readMaxBytes),
        input.endFlag === undefined
          ? transformParseEnvelope(input.parse)
          : transformParseEnvelope(input.parse, input.endFlag),
      ),
    );
  } catch (reason) {
    throw inputError(reason);
  }
}

/** The message of a body that is exactly one uncompressed envelope within the limit; else undefined. */
export function singleMessage(body: RequestBody, readMaxBytes: number): Uint8Array | undefined {
  if (body.total < ENVELOPE_HEAD_BYTES) {
    return undefined;
  }
  const all = joined(body);
  const length = all.readUInt32BE(1);
  if (all[0] !== 0 || length > readMaxBytes || body.total !== ENVELOPE_HEAD_BYTES + length) {
    return undefined;
  }
  return all.subarray(ENVELOPE_HEAD_BYTES);
}

/** The single message of a unary call, refused as Connect refuses none or several. */
async function onlyMessage(messages: AsyncIterable<Message>): Promise<Message> {
  const it = messages[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done === true) {
    throw new ConnectError(
      "protocol error: missing input message for unary method",
      Code.Unimplemented,
    );
  }
  const second = await it.next();
  if (second.done !== true) {
    throw new ConnectError(
      "protocol error: received extra input message for unary method",
      Code.Unimplemented,
    );
  }
  return first.value;
}
