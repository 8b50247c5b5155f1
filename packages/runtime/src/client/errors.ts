// API errors as types: callers branch on `instanceof NotFoundError`, not on status codes.
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: { reason?: string; message?: string; field?: string }[];
  retryAfterSeconds?: number;
}

/** The API server's `Status` body. */
export interface Status {
  kind?: 'Status';
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: StatusDetails;
}

export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly status: Status;
  readonly method: string;
  readonly path: string;
  /**
   * The response body as it came: parsed JSON (a Status from the API server; whatever a proxied backend
   * sends, through a service proxy) or text (a proxy's error page).
   */
  readonly body: unknown;
  constructor(method: string, path: string, code: number, status: Status, body: unknown = status) {
    super(`${method} ${path}: ${code}${status.reason ? ` ${status.reason}` : ''}: ${status.message ?? 'no message'}`);
    this.name = new.target.name;
    this.code = code;
    this.reason = status.reason ?? '';
    this.status = status;
    this.method = method;
    this.path = path;
    this.body = body;
  }
}

export class NotFoundError extends ApiError {}
export class AlreadyExistsError extends ApiError {}
/** 409 Conflict: a stale resourceVersion, or (server-side apply) fields owned by another manager. */
export class ConflictError extends ApiError {}
/** 410 Gone: the requested resourceVersion was compacted away; relist. */
export class GoneError extends ApiError {}
export class InvalidError extends ApiError {}
export class ForbiddenError extends ApiError {}
export class UnauthorizedError extends ApiError {}
export class TooManyRequestsError extends ApiError {}

export function apiError(method: string, path: string, code: number, body: unknown): ApiError {
  const status: Status = typeof body === 'object' && body !== null ? body : { message: typeof body === 'string' ? body : '' };
  const reason = status.reason ?? '';
  if (code === 404) return new NotFoundError(method, path, code, status, body);
  if (code === 409 && reason === 'AlreadyExists') return new AlreadyExistsError(method, path, code, status, body);
  if (code === 409) return new ConflictError(method, path, code, status, body);
  if (code === 410 || reason === 'Expired' || reason === 'Gone') return new GoneError(method, path, code, status, body);
  if (code === 422) return new InvalidError(method, path, code, status, body);
  if (code === 403) return new ForbiddenError(method, path, code, status, body);
  if (code === 401) return new UnauthorizedError(method, path, code, status, body);
  if (code === 429) return new TooManyRequestsError(method, path, code, status, body);
  return new ApiError(method, path, code, status, body);
}

export const isNotFound = (err: unknown): err is NotFoundError => err instanceof NotFoundError;
export const isConflict = (err: unknown): err is ConflictError => err instanceof ConflictError;
export const isAlreadyExists = (err: unknown): err is AlreadyExistsError => err instanceof AlreadyExistsError;
export const isGone = (err: unknown): err is GoneError => err instanceof GoneError;
