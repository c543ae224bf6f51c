/** The decorator suite as TypeScript 7 emits legacy \`experimentalDecorators\`. */
import { decoratorSuite } from './suite.js';

decoratorSuite({ compiler: 'typescript7', experimentalDecorators: true });
