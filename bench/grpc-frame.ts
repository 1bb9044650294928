/**
 * A gRPC length-prefixed message (not compressed): flag byte 0, the
 * message's length as 4 bytes big-endian, the message. Pre-framed once, so
 * the load generator spends nothing per call on protobuf or framing.
 */
export function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.byteLength);
  frame.writeUInt32BE(message.byteLength, 1);
  frame.set(message, 5);
  return frame;
}

/**
 * The length of the one message in a unary answer's body (its frames as
 * received), or undefined when the body is not one whole uncompressed message.
 */
export function grpcMessageLength(body: Buffer): number | undefined {
  if (body.length < 5 || body[0] !== 0) {
    return undefined;
  }
  const length = body.readUInt32BE(1);
  return body.length === 5 + length ? length : undefined;
}
