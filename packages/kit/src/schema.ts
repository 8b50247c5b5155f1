// `@quorum/kit/schema`: the kit's parts that need TypeBox at run time, apart from `@quorum/kit` so that an
// operator process loads TypeBox only if it builds a schema (API modules, generators) or parses a backup agent's
// argument (the agents).
export * from './backup-destination-schema.ts';
export { labelMap, stringEnum, stringMap } from './schema-nodes.ts';
