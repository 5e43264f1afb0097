'use strict';
// The package's error classes: `SessionkitError` and one subclass per kind
// of the core's error table (sessionkit::ErrorKind; `errorKinds` in
// index.js, which a test compares with these). Every error the package
// throws or rejects with is one of them, made here whether it comes from the
// addon (which calls `errorFor` through the factory index.js registers) or
// from the package's own argument checks. One module, required by index.js
// and index.mjs alike, so `instanceof` holds from CommonJS and ESM.

/** What every method of the package rejects (or throws) with: `code` is the
 *  core's error kind name, `errno` the OS error number (or null). */
class SessionkitError extends Error {
  constructor(message, options) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = options?.code ?? new.target.code ?? 'INTERNAL';
    this.errno = options?.errno ?? null;
  }
}

class NotFoundError extends SessionkitError {
  static code = 'NOT_FOUND';
}
class BusyError extends SessionkitError {
  static code = 'BUSY';
}
class ConflictError extends SessionkitError {
  static code = 'CONFLICT';
}
class InvalidInputError extends SessionkitError {
  static code = 'INVALID_INPUT';
}
class CorruptError extends SessionkitError {
  static code = 'CORRUPT';
}
class IoError extends SessionkitError {
  static code = 'IO';
}
class UnsupportedError extends SessionkitError {
  static code = 'UNSUPPORTED';
}
class InternalError extends SessionkitError {
  static code = 'INTERNAL';
}

const classes = [
  SessionkitError,
  NotFoundError,
  BusyError,
  ConflictError,
  InvalidInputError,
  CorruptError,
  IoError,
  UnsupportedError,
  InternalError,
];
// `err.name` (and so the first line of its stack) names the class.
for (const c of classes) {
  Object.defineProperty(c.prototype, 'name', { value: c.name, writable: true, configurable: true });
}

/** The class of each kind, by its code. */
const errorClasses = Object.freeze(Object.fromEntries(classes.slice(1).map((c) => [c.code, c])));

/** The error for a kind `code`: of its class (a kind this package does not
 *  know yet: a `SessionkitError` with that code). */
function errorFor(code, message, errno = null, cause = undefined) {
  const C = Object.hasOwn(errorClasses, code) ? errorClasses[code] : SessionkitError;
  return new C(message, { code, errno, cause });
}

module.exports = {
  SessionkitError,
  NotFoundError,
  BusyError,
  ConflictError,
  InvalidInputError,
  CorruptError,
  IoError,
  UnsupportedError,
  InternalError,
  errorClasses,
  errorFor,
};
