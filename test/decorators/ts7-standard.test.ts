/** The decorator suite as TypeScript 7 emits TC39 (standard) decorators. */
import { decoratorSuite } from './suite.js';

decoratorSuite({ compiler: 'typescript7', experimentalDecorators: false });
