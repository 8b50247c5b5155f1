// How kubectl names a kind in the plural: the resource name of the usual kinds. A leaf at the top of src, for the
// folders that need it without importing each other: deploy/ (the ClusterRole's resources) and cli/ (naming a kind).

/** The lower-case plural kubectl would use for a kind (its resource name, for the usual kinds). */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(lower)) return lower.endsWith('points') ? lower : `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}
