/** The decorator suite as TypeScript 5 emits legacy \`experimentalDecorators\`. */
import { decoratorSuite } from './suite.js';

decoratorSuite({ compiler: 'typescript', experimentalDecorators: true });
