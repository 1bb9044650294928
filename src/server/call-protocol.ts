/**
 * The protocol of a request to a Connect path, by its content type: connect,
 * grpc or grpc-web (media types are case-insensitive, as Connect matches them).
 */
export function rpcProtocol(contentType: string | null | undefined): string {
  const type = contentType?.toLowerCase();
  if (type?.startsWith("application/grpc-web")) {
    return "grpc-web";
  }
  if (type?.startsWith("application/grpc")) {
    return "grpc";
  }
  return "connect";
}
