import { unprocessable } from '../../domain/errors.js';

// Spec 1.12: only the keys sent are applied; null clears; an empty body is 422 (editions excepted).
export function sentKeys<T extends object>(input: T, pathKeys: readonly string[] = ['uuid']): (keyof T & string)[] {
  return (Object.keys(input) as (keyof T & string)[]).filter((k) => !pathKeys.includes(k) && input[k] !== undefined);
}

export function assertPatchNotEmpty(input: object, pathKeys: readonly string[] = ['uuid']): void {
  if (sentKeys(input, pathKeys).length === 0) {
    throw unprocessable('The request body is empty: send at least one field to change.');
  }
}

/** Whether a key was sent at all (null included), as opposed to left out. */
export function wasSent<T extends object>(input: T, key: keyof T): boolean {
  return key in input && input[key] !== undefined;
}
