/**
 * `{ ...base, ...extra }` for objects made on every request. In Node 20's V8, an object literal that begins
 * with a spread and then adds a property the spread did not bring (`{ ...body, stream: true }` where the body
 * had no `stream`) gets a hidden class of its own each time, once its function is optimised: about 1.5 µs to
 * make, and every function that reads it later, JSON.stringify included, meets a shape it has not seen.
 * Copying onto a fresh object keeps one shape per kind of object, as literals have. Node 24's V8 does not need it.
 */
export const extended = <A extends object, B extends object>(base: A, extra: B): A & B => Object.assign({}, base, extra);
