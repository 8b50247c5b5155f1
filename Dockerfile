# The Quorum etcd operator's image, for users with a registry: Node 24 runs the TypeScript sources directly.
# (localkube assembles the same layout without Docker: packages/etcd-operator/src/deploy/image.ts.)
FROM node:24-bookworm-slim AS deps
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
RUN npm ci --omit=dev --ignore-scripts --workspace @quorum/etcd-operator --include-workspace-root=false

FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY package.json ./
COPY packages/runtime/package.json packages/runtime/
COPY packages/runtime/src packages/runtime/src
COPY packages/storage/package.json packages/storage/
COPY packages/storage/src packages/storage/src
COPY packages/images/package.json packages/images/
COPY packages/images/src packages/images/src
COPY packages/kit/package.json packages/kit/
COPY packages/kit/src packages/kit/src
COPY packages/etcd-operator/package.json packages/etcd-operator/
COPY packages/etcd-operator/src packages/etcd-operator/src
USER 65532:65532
ENV NODE_ENV=production
# The workspace packages resolve to their TypeScript sources under this condition (their default exports are
# a dist/ this image does not build); in NODE_OPTIONS too for the backup agent, whose Jobs replace the entrypoint.
ENV NODE_OPTIONS=--conditions=@quorum/source
ENTRYPOINT ["/nodejs/bin/node", "--conditions=@quorum/source", "packages/etcd-operator/src/operator/main.ts"]
