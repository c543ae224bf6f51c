/** The decorator suite as TypeScript 5 emits TC39 (standard) decorators. */
import { decoratorSuite } from './suite.js';

decoratorSuite({ compiler: 'typescript', experimentalDecorators: false });
