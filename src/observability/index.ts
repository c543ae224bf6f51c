/**
 * breakwater/observability: a request handler serving a registry's health (`/health`), Prometheus
 * metrics (`/metrics`) and a live dashboard (`/dashboard`, fed by `/events`), for
 * `node:http`, Express and Fastify.
 * @packageDocumentation
 */

export type { OmittedKeys } from '../registry/listing.js';
export {
  createObservabilityHandler,
  type NextFunction,
  type ObservabilityHandler,
  PROMETHEUS_CONTENT_TYPE,
} from './handler.js';
export type { HealthReport, UnavailableBreaker, UnavailableInstance } from './health.js';
export { type ObservabilityHandlerOptions, observabilityHandlerDefaults } from './options.js';
