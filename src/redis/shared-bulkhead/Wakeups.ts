/**
 * How a Redis bulkhead's waiting calls learn that a permit may be theirs: a message on this
 * process's pub/sub channel when a release elsewhere hands it the turn, and a poll at a
 * jittered interval (and at the end of the earliest lease) that covers lost messages. Apart
 * from the gate because the subscription and the timer have lifetimes of their own: subscribed
 * at the first wait, ended at dispose.
 */
import type { Clock, TimerHandle } from '../../clock/Clock.js';
import { makeSubscriber, type Subscriber } from './subscriber.js';

/** @internal */
export class Wakeups {
  private subscriber: Subscriber | undefined = undefined;
  private subscribed = false;
  private pollTimer: TimerHandle | undefined = undefined;
  private pollAt = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    /** This process's pub/sub channel. */
    private readonly channel: string,
    /** The `subscriber` and `client` options. */
    private readonly subscriberOption: unknown,
    private readonly client: unknown,
    private readonly pollInterval: number,
    private readonly random: () => number,
    /** A permit was freed somewhere and handed to this process's turn. */
    private readonly onFreed: () => void,
    /** The poll is due. */
    private readonly onPoll: () => void,
  ) {}

  /** True while a poll is scheduled. */
  get polling(): boolean {
    return this.pollTimer !== undefined;
  }

  /** Listens on the channel, from the first call to wait on. */
  subscribe(): void {
    if (this.subscribed || this.stopped) return;
    this.subscribed = true;
    this.subscriber ??= makeSubscriber(this.subscriberOption, this.client);
    if (this.subscriber === undefined) return;
    // Meanwhile the poll wakes the waiting calls; the next call to wait tries again.
    Promise.resolve(this.subscriber.adapter.subscribe(this.channel, this.onFreed)).catch(() => {
      this.subscribed = false;
    });
  }

  /** Polls in a jittered `pollInterval`, or when the earliest lease ends (`leaseEnd` ms), if sooner. */
  schedulePoll(leaseEnd: number): void {
    let delay = this.pollInterval * (0.5 + this.random());
    if (leaseEnd >= 0 && leaseEnd + 1 < delay) delay = leaseEnd + 1;
    this.schedulePollIn(delay);
  }

  schedulePollIn(delay: number): void {
    const at = this.clock.now() + delay;
    if (this.pollTimer !== undefined) {
      if (this.pollAt <= at) return;
      this.clock.clearTimer(this.pollTimer);
    }
    this.pollAt = at;
    // Calls wait for it: it keeps the process alive.
    this.pollTimer = this.clock.setTimer(this.poll, delay, true);
  }

  cancelPoll(): void {
    if (this.pollTimer === undefined) return;
    this.clock.clearTimer(this.pollTimer);
    this.pollTimer = undefined;
    this.pollAt = Number.POSITIVE_INFINITY;
  }

  /** Cancels the poll and ends the subscription (closing a connection the bulkhead opened). */
  stop(): void {
    this.stopped = true;
    this.cancelPoll();
    if (this.subscriber === undefined) return;
    if (this.subscribed) {
      Promise.resolve(this.subscriber.adapter.unsubscribe(this.channel, this.onFreed)).catch(
        () => {},
      );
    }
    this.subscriber.close();
  }

  private readonly poll = (): void => {
    this.pollTimer = undefined;
    this.pollAt = Number.POSITIVE_INFINITY;
    this.onPoll();
  };
}
