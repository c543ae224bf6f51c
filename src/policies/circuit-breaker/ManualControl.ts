import type { Disposer } from '../../events/Listeners.js';
import type { CircuitController } from './CircuitController.js';
import { S_CLOSED, S_DISABLED, S_FORCED_OPEN, S_METRICS_ONLY } from './state.js';

/**
 * @internal The transitions a person asks for (isolate, force open, reset, trip, disable,
 * metrics only), each applying the time-driven ones due first; it keeps the isolations
 * handed out. Made on a breaker's first manual call.
 */
export class ManualControl {
  private isolations = 0;
  /** Grows on every reset: disposers of isolations from before it count no more. */
  private epoch = 0;

  constructor(private readonly c: CircuitController) {}

  isolate(): Disposer {
    const c = this.c;
    c.settleNow();
    this.isolations++;
    if (c.code !== S_FORCED_OPEN) c.moveTo(S_FORCED_OPEN, 'manual');
    // reset() ends every isolation at once; disposers handed out before it must not count
    // against isolations made after it.
    const epoch = this.epoch;
    let live = true;
    return () => {
      if (!live || epoch !== this.epoch) return;
      live = false;
      c.settleNow();
      if (--this.isolations === 0 && c.code === S_FORCED_OPEN) c.close('manual');
    };
  }

  forceOpen(): void {
    this.hold(S_FORCED_OPEN);
  }

  reset(): void {
    const c = this.c;
    c.settleNow();
    this.isolations = 0;
    this.epoch++;
    if (c.code === S_CLOSED) c.renew();
    c.close('manual');
  }

  trip(): void {
    const now = this.c.options.clock.now();
    this.c.settleTime(now);
    this.c.open(now, 'manual', false);
  }

  disable(): void {
    this.hold(S_DISABLED);
  }

  metricsOnly(): void {
    const c = this.c;
    c.settleNow();
    if (c.code === S_METRICS_ONLY) return;
    c.clearWindow();
    c.moveTo(S_METRICS_ONLY, 'manual');
  }

  /** Moves to state code `s` by hand (forced open, disabled), unless it is there already. */
  private hold(s: number): void {
    this.c.settleNow();
    if (this.c.code !== s) this.c.moveTo(s, 'manual');
  }
}
