// Typed errors of Overseer. Every error a tool can raise is one of these; `toToolResult`
// (src/tools/result.ts) maps them to MCP `isError` results in one place.

export type ErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'invalid_state'
  | 'forbidden'
  | 'conflict'
  | 'store_busy'
  | 'budget_exceeded'
  | 'internal';

/** Base class: a stable `code` for clients, a message that says what to do, the cause kept. */
export class OverseerError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'OverseerError';
  }
}

/** Bad input that zod could not express (cross-field rules, file system facts). */
export class InvalidInputError extends OverseerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_input', message, options);
    this.name = 'InvalidInputError';
  }
}

/** An id that names nothing. The message lists what does exist nearby. */
export class NotFoundError extends OverseerError {
  constructor(message: string) {
    super('not_found', message);
    this.name = 'NotFoundError';
  }
}

/** A spawn that cannot be placed (issue 30: an unknown host, labels no worker has, a job that cannot
 * leave the hub's machine): bad input, nothing written; the message lists the workers. */
export class PlacementError extends InvalidInputError {
  constructor(message: string) {
    super(message);
    this.name = 'PlacementError';
  }
}

/** The thing exists but cannot do that now (e.g. resume a running job). */
export class InvalidStateError extends OverseerError {
  constructor(message: string) {
    super('invalid_state', message);
    this.name = 'InvalidStateError';
  }
}

/** The caller's role or subtree does not allow the action. */
export class ForbiddenError extends OverseerError {
  constructor(message: string) {
    super('forbidden', message);
    this.name = 'ForbiddenError';
  }
}

/** A compare-and-set or lock conflict: the state moved on; the message says where it is now. */
export class ConflictError extends OverseerError {
  constructor(message: string) {
    super('conflict', message);
    this.name = 'ConflictError';
  }
}

/**
 * A spawn (or resume) would take a budget past its limit: house, label or an agent's subtree
 * (src/money/budget.ts). `details` carries the numbers for clients that read structuredContent.
 */
export class BudgetExceededError extends OverseerError {
  readonly details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown>) {
    super('budget_exceeded', message);
    this.name = 'BudgetExceededError';
    this.details = details;
  }
}

/** SQLite was busy past its timeout; a retry may work. */
export class StoreBusyError extends OverseerError {
  constructor(cause: unknown) {
    super('store_busy', 'The state database is busy (another process holds a write lock). Retry the call in a moment.', { cause });
    this.name = 'StoreBusyError';
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
