/**
 * Loads proto/grpc_inference.proto (the KServe v2 service) once. The file is found from
 * the package root, so the same code works from src/ under tsx and from dist/.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'proto'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find proto/grpc_inference.proto above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export const PROTO_PATH = path.join(packageRoot(), 'proto', 'grpc_inference.proto');

/** keepCase: messages use the proto's snake_case names, as Triton's documentation does. */
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

let cached: grpc.ServiceClientConstructor | undefined;

/** The generated client constructor (its `.service` is the definition servers register). */
export function inferenceService(): grpc.ServiceClientConstructor {
  if (cached) return cached;
  const definition = protoLoader.loadSync(PROTO_PATH, LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    inference: { GRPCInferenceService: grpc.ServiceClientConstructor };
  };
  cached = pkg.inference.GRPCInferenceService;
  return cached;
}
