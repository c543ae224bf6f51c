/**
 * A long-running server as a real child process: started with `node script`, ready once it
 * writes "listening on <port>" on stdout, stopped by a signal.
 */
import { spawn } from 'node:child_process';
import type { ChildExit } from './child.js';

export interface ServiceProcess {
  /** The port it said it listens on. */
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Everything it wrote so far, stdout then stderr. */
  output(): string;
  /** Resolves when it has exited, whatever the reason. */
  readonly exited: Promise<ChildExit>;
  /**
   * Sends `signal` and resolves when it has exited; still running after `limitMs`, it is
   * killed (SIGKILL) and reported `killed`.
   */
  stop(signal?: NodeJS.Signals, limitMs?: number): Promise<ChildExit>;
}

const LISTENING = /listening on (\d+)/;

/**
 * Runs `node script` in `cwd` with `env` added to this process's environment and resolves
 * once it writes "listening on <port>"; rejects (and kills it) when it exits first or is not
 * listening within `startLimitMs`.
 */
export function startService(
  script: string,
  cwd: string,
  env: Readonly<Record<string, string>>,
  startLimitMs = 15_000,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [script], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
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
  const output = () => `${stdout}${stderr}`;
  const exited = new Promise<ChildExit>((resolve) => {
    child.on('close', (code, signal) => {
      resolve({ code, signal, killed, stdout, stderr, exitedAt: Date.now() });
    });
  });
  const kill = () => {
    killed = true;
    child.kill('SIGKILL');
  };
  // A service must not outlive the test process that started it.
  process.once('exit', kill);
  void exited.then(() => process.off('exit', kill));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      kill();
      reject(new Error(`${script} was not listening within ${startLimitMs} ms:\n${output()}`));
    }, startLimitMs);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code ?? signal}) before listening:\n${output()}`));
    });
    const ready = () => {
      const match = LISTENING.exec(stdout);
      if (match === null) return;
      child.stdout.off('data', ready);
      clearTimeout(timer);
      const port = Number(match[1]);
      resolve({
        port,
        url: `http://127.0.0.1:${port}`,
        output,
        exited,
        stop(signal = 'SIGTERM', limitMs = 10_000) {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          const t = setTimeout(kill, limitMs);
          return exited.finally(() => clearTimeout(t));
        },
      });
    };
    child.stdout.on('data', ready);
  });
}
