/**
 * The header that carries a request's deadline across the wire: the milliseconds the receiver
 * has left, a non-negative integer. The server middleware reads it (capped by its own maximum)
 * and the protected fetch writes the time left into it; both take another name by option.
 * @default "x-timeout-ms"
 */
export const DEADLINE_HEADER = 'x-timeout-ms';

/**
 * The header that carries a request's criticality across the wire (`critical-plus`,
 * `critical`, `sheddable-plus` or `sheddable`), read by the server middleware and written by
 * the protected fetch when the request context has one.
 * @default "x-criticality"
 */
export const CRITICALITY_HEADER = 'x-criticality';
