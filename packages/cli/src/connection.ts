// kubectl's connection flags that take a value, as users put them before a command too: `-n NS status`.
import { CONNECTION_FLAGS } from '@quorum/runtime';

export const CONNECTION_VALUE_FLAGS: readonly string[] = Object.entries(CONNECTION_FLAGS).flatMap(([name, flag]) =>
  flag.type === 'string' ? [`--${name}`, ...('short' in flag ? [`-${flag.short}`] : [])] : [],
);
