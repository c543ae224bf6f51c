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

/** A child process that talks in lines of JSON: commands in on stdin, messages out on stdout. */
export interface TalkingChild {
  /** Writes `message` as one line of JSON to the child's stdin. */
  send(message: object): void;
  /** Every message the child wrote so far, in order. */
  readonly messages: readonly Record<string, unknown>[];
  /**
   * Resolves with the first message (already received or to come) for which `match` holds;
   * rejects when the child exits first or `limitMs` passes.
   */
  next(
    match: (message: Record<string, unknown>) => boolean,
    limitMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves when the child has exited (after `end()` or by itself), with what it wrote on stderr. */
  readonly exited: Promise<ChildExit>;
  /** Closes its stdin (a child reading it ends then); SIGKILL after `limitMs`. */
  end(limitMs?: number): Promise<ChildExit>;
}

/**
 * Starts `node script ...args` in `cwd` as a {@link TalkingChild}; killed (SIGKILL) if still
 * running after `limitMs`.
 */
export function startTalkingChild(
  script: string,
  args: readonly (string | number)[],
  cwd: string,
  limitMs: number,
): TalkingChild {
  const child = spawn(process.execPath, [script, ...args.map(String)], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let stdout = '';
  let rest = '';
  let stderr = '';
  let killed = false;
  let done = false;
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    rest += chunk;
    let nl = rest.indexOf('\n');
    while (nl >= 0) {
      const line = rest.slice(0, nl).trim();
      rest = rest.slice(nl + 1);
      if (line !== '') {
        try {
          messages.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          messages.push({ unparsed: line });
        }
      }
      nl = rest.indexOf('\n');
    }
    for (const w of [...waiters]) w();
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdin.on('error', () => {});
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, limitMs);
  const exited = new Promise<ChildExit>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done = true;
      for (const w of [...waiters]) w();
      resolve({ code, signal, killed, stdout, stderr, exitedAt: Date.now() });
    });
  });
  return {
    send(message) {
      child.stdin.write(`${JSON.stringify(message)}\n`);
    },
    messages,
    next(match, wait = 10_000) {
      return new Promise((resolve, reject) => {
        let seen = 0;
        const check = () => {
          for (; seen < messages.length; seen++) {
            if (match(messages[seen]!)) {
              finish();
              resolve(messages[seen]!);
              return;
            }
          }
          if (done) {
            finish();
            reject(new Error(`the child exited first: ${stderr}`));
          }
        };
        const t = setTimeout(() => {
          finish();
          reject(new Error(`no matching message within ${wait} ms; stderr: ${stderr}`));
        }, wait);
        const finish = () => {
          clearTimeout(t);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    exited,
    end(wait = 5_000) {
      child.stdin.end();
      const t = setTimeout(() => child.kill('SIGKILL'), wait);
      return exited.finally(() => clearTimeout(t));
    },
  };
}
