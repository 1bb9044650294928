import assert from "node:assert/strict";
import {
  create,
  createFileRegistry,
  type DescService,
  type MessageInitShape,
  setExtension,
} from "@bufbuild/protobuf";
import {
  type DescriptorProtoSchema,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { http } from "@perps/token-client/contract/google/api/annotations_pb.js";
import { HttpRuleSchema } from "@perps/token-client/contract/google/api/http_pb.js";
import {
  bearer_auth,
  http_success_status,
} from "@perps/token-client/contract/perps/api/v1/http_pb.js";

export type RuleInit = MessageInitShape<typeof HttpRuleSchema>;

export interface RunTimeMethod {
  name: string;
  rule?: RuleInit;
  status?: number;
  bearer?: boolean;
  streaming?: boolean;
}

/**
 * Service `t.S` of a file built at run time, for rules the checked-in protos
 * must not contain. Its methods take `t.Req` and answer `t.Res`; `messages`
 * declares `Req` (and any message it uses), `Res` is added empty.
 */
export function runTimeService(
  methods: RunTimeMethod[],
  messages: MessageInitShape<typeof DescriptorProtoSchema>[],
): DescService {
  const file = create(FileDescriptorProtoSchema, {
    name: "t.proto",
    package: "t",
    syntax: "proto3",
    messageType: [...messages, { name: "Res" }],
    service: [
      {
        name: "S",
        method: methods.map((m) => {
          const options = create(MethodOptionsSchema);
          if (m.rule !== undefined) {
            setExtension(options, http, create(HttpRuleSchema, m.rule));
          }
          if (m.status !== undefined) {
            setExtension(options, http_success_status, m.status);
          }
          if (m.bearer !== undefined) {
            setExtension(options, bearer_auth, m.bearer);
          }
          return {
            name: m.name,
            inputType: ".t.Req",
            outputType: ".t.Res",
            options,
            serverStreaming: m.streaming ?? false,
          };
        }),
      },
    ],
  });
  const service = createFileRegistry(file, () => undefined).getService("t.S");
  assert.ok(service);
  return service;
}
