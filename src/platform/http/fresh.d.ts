// The `fresh` package (a dependency of express, pinned as our own) ships no types: its one function.
declare module 'fresh' {
  /** Whether a response with `resHeaders` (its `etag`, `last-modified`) is fresh for a request with `reqHeaders`. */
  export default function fresh(reqHeaders: Record<string, string | string[] | undefined>, resHeaders: Record<string, string | undefined>): boolean;
}
