/**
 * examples/fastify-service: the Fastify 5 service, run as a real process against flaky
 * downstreams and a real redis-server.
 */
import { describeExampleService } from '../support/example-service.js';

describeExampleService('examples/fastify-service', 'examples/fastify-service/server.mjs');
