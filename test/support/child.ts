import { spawn } from 'node:child_process';

/** How a child process ended, with what it wrote. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** True when it was still running after the limit and was killed. */
  readonly killed: boolean;
  readonly stdout: string;
  readonly stderr: string;
  /** `Date.now()` when it closed. */
  readonly exitedAt: number;
}

/**
 * Runs `node ...nodeOptions script ...args` in `cwd` and resolves when it closes; a process
 * still running after `limitMs` is killed (SIGKILL) and reported `killed`. `env` is added to
 * this process's environment.
 */
export function runNodeScript(
  script: string,
  args: readonly (string | number)[],
  cwd: string,
  limitMs: number,
  options: {
    readonly nodeOptions?: readonly string[];
    readonly env?: Readonly<Record<string, string>>;
  } = {},
): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    const { nodeOptions = [], env } = options;
    const child = spawn(process.execPath, [...nodeOptions, script, ...args.map(String)], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: env === undefined ? process.env : { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, limitMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, killed, stdout, stderr, exitedAt: Date.now() });
    });
  });
}
