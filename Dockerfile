# The Quorum etcd operator's image, for users with a registry: Node 24 runs the workspace packages compiled to
# JavaScript (issue 24: stripping the TypeScript sources at every start cost about 29 MiB of RSS). localkube
# assembles the same layout without Docker (packages/kit/src/image/operator-image.ts, for every operator).

# The workspace's manifests, which npm ci installs from.
FROM node:24-bookworm-slim AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/images/package.json packages/images/
COPY packages/localkube/package.json packages/localkube/
COPY packages/runtime/package.json packages/runtime/
COPY packages/storage/package.json packages/storage/
COPY packages/kit/package.json packages/kit/
COPY packages/etcd-operator/package.json packages/etcd-operator/
COPY packages/recorder/package.json packages/recorder/
COPY packages/redis-operator/package.json packages/redis-operator/
COPY packages/rbac-manager/package.json packages/rbac-manager/
COPY packages/cli/package.json packages/cli/

FROM manifests AS deps
RUN npm ci --omit=dev --ignore-scripts --workspace @quorum/etcd-operator --include-workspace-root=false

# The workspace packages compiled by the TypeScript compiler (a root devDependency), one file at a time, as the
# kit does for localkube's images: packages/<name>/dist/ and a package.json whose exports point there.
FROM manifests AS build
RUN npm ci --ignore-scripts --workspace @quorum/kit --include-workspace-root
COPY packages/runtime/src packages/runtime/src
COPY packages/storage/src packages/storage/src
COPY packages/images/src packages/images/src
COPY packages/kit/src packages/kit/src
COPY packages/etcd-operator/src packages/etcd-operator/src
RUN node packages/kit/src/image/write-built.ts /out packages/runtime packages/storage packages/images packages/kit packages/etcd-operator \
 && mkdir -p /out/usr/local/bin && ln -s /nodejs/bin/node /out/usr/local/bin/node

FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY package.json ./
COPY --from=build /out/app/packages packages
# The backup agent's Jobs run /usr/local/bin/node, where the localkube images have it; distroless has /nodejs/bin.
COPY --from=build /out/usr/local/bin /usr/local/bin
USER 65532:65532
ENV NODE_ENV=production
# --max-semi-space-size=1: V8's young generation kept small (see packages/kit/src/image/operator-image.ts).
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=1", "packages/etcd-operator/dist/operator/main.js"]
