// @quorum/kit: the machinery every Quorum operator shares, written once.
export {};
