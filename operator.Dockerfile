# The Kubernetes operator alone (charts/recognition-operator runs it): one esbuild bundle
# of src/cli/operator-main.ts on Node.js, no node_modules, so none of the API's ONNX Runtime,
# sharp or AWS SDK. The API image (Dockerfile) still runs it too: node dist/cli/main.js operator.
# Build: docker build -t recognition-operator:0.1.0 -f operator.Dockerfile .
# The bases are arguments like the root Dockerfile's (scripts/images.sh builds on local ones).
ARG NODE_IMAGE=node:24-bookworm-slim
ARG BUILD_IMAGE=${NODE_IMAGE}

# --- build: install the dependencies and bundle the operator ----------------------------
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
# The same first steps as the root Dockerfile's, so Docker reuses that install layer.
COPY package.json package-lock.json .npmrc ./
COPY packages/client/package.json ./packages/client/
COPY packages/cli/package.json ./packages/cli/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY scripts/build-operator.mjs ./scripts/
# Fails when ONNX Runtime, sharp, the AWS SDK, knex, pg, ioredis or Fastify get into the bundle.
RUN node scripts/build-operator.mjs dist/operator/operator.js

# --- runtime: Node.js and the bundle ------------------------------------------------------
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/dist/operator/operator.js ./operator.js
# Non-root, the uid the chart's securityContext names; it reads no file of its own at run time.
USER 1000:1000
EXPOSE 8081
ENTRYPOINT ["node", "/app/operator.js"]
