/** The timeout's error lives with the library's errors: a call's own deadline fails with it too. */
export { isTimeoutError, TimeoutError } from '../../errors/TimeoutError.js';
