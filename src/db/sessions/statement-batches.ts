/**
 * Calls of one statement in batches (docs/decisions/0021, 0037): a call waits while `maxInFlight` statements run (with
 * `gather: 'turn'`, also to the end of its event-loop turn), and the calls gathered meanwhile go as one.
 */
export class StatementBatches<A> {
  private readonly waiting: Array<{ argument: string; resolve(answer: A): void; reject(error: unknown): void }> = [];
  private inFlight = 0;
  private turnEnding = false;
  /** Statements sent and the calls they carried (for tests and the benchmark). */
  readonly sent = { statements: 0, calls: 0 };

  /**
   * `statement` answers each call's argument in order, or throws for the whole batch. `retry`: a failed batch's calls
   * go again alone in turn (writes, in order) or at once (reads: none waits out the timeouts of those before it).
   */
  constructor(
    private readonly statement: (batch: readonly string[]) => Promise<A[]>,
    private readonly maxBatch: number,
    private readonly maxInFlight: number,
    private readonly retry: 'in turn' | 'at once' = 'in turn',
    private readonly gather: 'none' | 'turn' = 'none',
  ) {}

  call(argument: string): Promise<A> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ argument, resolve, reject });
      if (this.gather === 'none') return this.next();
      if (this.turnEnding) return;
      this.turnEnding = true;
      setImmediate(() => {
        this.turnEnding = false;
        this.next();
      });
    });
  }

  private next(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.send(batch).finally(() => {
        this.inFlight -= 1;
        this.next();
      });
    }
  }

  /** A batch that fails as a whole is tried again one call at a time, so each call gets its own answer. */
  private async send(batch: typeof this.waiting): Promise<void> {
    try {
      const answers = await this.run(batch.map((call) => call.argument));
      batch.forEach((call, index) => call.resolve(answers[index]!));
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      const alone = async (call: (typeof batch)[number]) => {
        try {
          call.resolve((await this.run([call.argument]))[0]!);
        } catch (failed) {
          call.reject(failed);
        }
      };
      if (this.retry === 'at once') await Promise.all(batch.map(alone));
      else for (const call of batch) await alone(call);
    }
  }

  private async run(batch: readonly string[]): Promise<A[]> {
    this.sent.statements += 1;
    this.sent.calls += batch.length;
    const answers = await this.statement(batch);
    if (answers.length !== batch.length)
      throw new Error(`a batch statement answered ${answers.length} of ${batch.length}`);
    return answers;
  }
}
