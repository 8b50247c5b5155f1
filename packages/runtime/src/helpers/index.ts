// Helpers controllers use in reconciles: conditions, finalizers, owner references, events, apply-if-changed,
// a status write that skips unchanged values, bounded waits (a CRD established, a Deployment rolled out).
export * from './conditions.ts';
export * from './finalizers.ts';
export * from './owner.ts';
export * from './events.ts';
export * from './apply.ts';
export * from './status.ts';
export * from './wait.ts';
