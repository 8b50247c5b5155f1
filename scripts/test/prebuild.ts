// Builds ahead, from t = 0, what tests build on first use (object-store servers, helm, Prometheus and their
// images), so that a cold machine overlaps those builds with the suite instead of waiting for each where it
// is first used. A test that needs a project before it is
// built waits for it through the build's lock (packages/localkube/src/build/go-binaries.ts). On a warm cache
// every step finds its result and returns at once.
import { fakeGcsServerImage, helmBinary, minioImage, prometheusBinaries, prometheusImage, storageServers } from '@quorum/localkube';
import { prometheusImageArchive } from '../../packages/localkube/src/monitoring/prometheus.ts';
import { azuriteImageArchive, fakeGcsServerImageArchive, minioImageArchive } from '../../packages/localkube/src/storage/servers.ts';

// In the order unit files first need them: helm (the chart's unit tests), Prometheus and promtool (the alert
// rules' tests), the storage servers' binaries (the drivers' tests); then the images, which only the
// integration files load (the Azurite image copies a large node_modules: minutes of disk work at low priority).
const steps: [string, () => Promise<unknown>][] = [
  ['helm', helmBinary],
  ['Prometheus and promtool', prometheusBinaries],
  ['MinIO and fake-gcs-server', storageServers],
  [`MinIO image (${minioImage})`, minioImageArchive],
  [`fake-gcs-server image (${fakeGcsServerImage})`, fakeGcsServerImageArchive],
  [`Prometheus image (${prometheusImage})`, prometheusImageArchive],
  ['Azurite image', azuriteImageArchive],
];

let failed = 0;
for (const [label, build] of steps) {
  const t0 = performance.now();
  try {
    await build();
    process.stderr.write(`[prebuild] ${label}: ready in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  } catch (err) {
    // Not fatal here: the test that needs it builds it again and fails by name with the build's own error.
    failed++;
    process.stderr.write(`[prebuild] ${label}: FAILED: ${(err as Error).message}\n`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
