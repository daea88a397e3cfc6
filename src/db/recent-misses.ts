/**
 * Keys a store found nothing for, remembered for `ttlMs` (at most `capacity`, oldest forgotten first), so asking again
 * costs no round trip. Only for keys nobody can know before the row exists, so a remembered miss never hides a row.
 */
export class RecentMisses {
  /** Key → when it is forgotten (epoch ms), oldest first. */
  private readonly until = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: { readonly capacity: number; readonly ttlMs: number; now?: () => number }) {
    this.now = options.now ?? Date.now;
  }

  /** `load`'s answer, or null without calling it when `key` was found missing within `ttlMs`. */
  async read<V>(key: string, load: () => Promise<V | null>): Promise<V | null> {
    if (this.has(key)) return null;
    const value = await load();
    if (value === null) this.add(key);
    return value;
  }

  has(key: string): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(key);
    return false;
  }

  private add(key: string): void {
    if (this.options.capacity <= 0) return;
    this.until.delete(key);
    if (this.until.size >= this.options.capacity) this.until.delete(this.until.keys().next().value!);
    this.until.set(key, this.now() + this.options.ttlMs);
  }

  /** A row with this key now exists (this process wrote it). */
  forget(key: string): void {
    this.until.delete(key);
  }
}
