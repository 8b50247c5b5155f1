// The controller runtime (issue 3) lands here.
export {};
