/**
 * examples/express-service: the Express 5 service, run as a real process against flaky
 * downstreams and a real redis-server.
 */
import { describeExampleService } from '../support/example-service.js';

describeExampleService('examples/express-service', 'examples/express-service/server.mjs');
