// @quorum/rbac-manager: access as code (issue 22).
export {};
