import type { components, paths } from '../../clients/typescript/schema.js';

// The types of the API's answers as the tests read them: taken from the generated OpenAPI types
// (clients/typescript/schema.d.ts, `npm run client:generate`), chosen by the request's method and path. A call
// `t.get(`/offers/${uuid}`)` has the body of `GET /offers/{uuid}`'s success answer (an `Offer`), a call
// `t.get('/offers?status=draft')` that of `GET /offers` (an `Offer[]`); no annotation at the call site.
// A path the document does not declare (the public pages, /openapi.json, tRPC, a path built from a `string`),
// or a method it does not allow there, has an `unknown` body: the test narrows it (`expectProblem`, ./json.ts).
// An error answer's body is read through `expectProblem` (harness.ts), which checks its problem+json shape.

/** The lower-case methods of `paths`. */
export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The path without its query string. */
type PathOnly<P extends string> = P extends `${infer Path}?${string}` ? Path : P;

/** `/offers/x/transition` as `['', 'offers', 'x', 'transition']`. */
type Segments<S extends string> = S extends `${infer Head}/${infer Rest}` ? [Head, ...Segments<Rest>] : [S];

/** Whether the segments of a request path fit those of a declared path (`{uuid}` fits any one segment). */
type Fits<I extends string[], K extends string[]> = I extends [infer IH extends string, ...infer IR extends string[]]
  ? K extends [infer KH extends string, ...infer KR extends string[]]
    ? KH extends `{${string}}`
      ? Fits<IR, KR>
      : [IH] extends [KH]
        ? Fits<IR, KR>
        : false
    : false
  : K extends []
    ? true
    : false;

/** The declared paths a request path fits (never: none). */
type DeclaredOf<P extends string> = {
  [K in keyof paths & string]: Fits<Segments<PathOnly<P>>, Segments<K>> extends true ? K : never;
}[keyof paths & string];

/** As `DeclaredOf`, also for a raw request's path with the default base path `/api` in front. */
export type Declared<P extends string> = [DeclaredOf<P>] extends [never] ? (P extends `/api/${infer Rest}` ? DeclaredOf<`/${Rest}`> : never) : DeclaredOf<P>;

type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;

/** The body of an operation's success answers (2xx): its JSON, or undefined (204, a file's bytes). */
type SuccessBody<Op> = Op extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 | 204 ? JsonContent<R[S]> : never }[keyof R]
  : never;

type OperationOf<K, M extends string> = K extends keyof paths ? (M extends keyof paths[K] ? paths[K][M] : never) : never;

/** The body of the success answer to `method path` as the OpenAPI document declares it, else `unknown`. */
export type ResponseBody<M extends string, P extends string> = P extends string // one per path of a union
  ? [SuccessBody<OperationOf<Declared<P>, Lowercase<M>>>] extends [never]
    ? unknown
    : SuccessBody<OperationOf<Declared<P>, Lowercase<M>>>
  : never;

/** The JSON request body of `method path` as the OpenAPI document declares it (a builder's return type). */
export type RequestBody<M extends string, P extends string> =
  OperationOf<Declared<P>, Lowercase<M>> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** A component schema of the OpenAPI document (`Schema<'Offer'>`), for helpers that pass bodies around. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];
