import type { connectNodeAdapter } from "@connectrpc/connect-node";

/** A node request listener for HTTP/1.1 and HTTP/2, as connect-node's adapter is one. */
export type NodeHandler = ReturnType<typeof connectNodeAdapter>;
export type NodeServerRequest = Parameters<NodeHandler>[0];
export type NodeServerResponse = Parameters<NodeHandler>[1];
