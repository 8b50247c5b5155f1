// The one quorum formula: how many of `voters` voting members must agree (raft's majority). The planner,
// the status and the multi-endpoint client all count with it.
export const quorum = (voters: number): number => Math.floor(voters / 2) + 1;
