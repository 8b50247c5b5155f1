// One JSON line per figure on stdout, as `npm run bench` promises.
export function report(bench: string, value: number, unit: string): void {
  process.stdout.write(JSON.stringify({ bench, value: Math.round(value * 1000) / 1000, unit }) + '\n');
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
