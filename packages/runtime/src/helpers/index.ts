// Helpers controllers use in reconciles: conditions, finalizers, owner references, events, apply-if-changed.
export * from './conditions.ts';
export * from './finalizers.ts';
export * from './owner.ts';
export * from './events.ts';
export * from './apply.ts';
