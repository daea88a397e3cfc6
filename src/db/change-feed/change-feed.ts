/**
 * Tells this process that something changed in the database, whoever changed it: only "look again". While not `live`
 * changes may go unheard, so caches must not serve; `onReset` listeners hear when that starts and ends.
 */
export interface ChangeFeed {
  /** True while every change is being heard. */
  readonly live: boolean;
  subscribe(channel: ChangeChannel, listener: (key: string) => void): () => void;
  /** Called whenever changes may have been missed: drop whatever was learnt from the database. */
  onReset(listener: () => void): () => void;
  /**
   * Calls `onChange` whenever session `id` may have changed (and on every reset), until the
   * returned function is called.
   */
  watch(id: string, onChange: () => void): () => void;
  close(): Promise<void>;
}

// kassa_session_created names new sessions apart from changed ones: caches of a session are not dropped by its birth.
export const CHANGE_CHANNELS = [
  'kassa_checkout_session',
  'kassa_api_key',
  'kassa_organisation',
  'kassa_session_created',
] as const;
export type ChangeChannel = (typeof CHANGE_CHANNELS)[number];

/** A feed that hears nothing: caches never serve, watchers are never told (CLI commands). */
export const SILENT_FEED: ChangeFeed = {
  live: false,
  subscribe: () => () => {},
  onReset: () => () => {},
  watch: () => () => {},
  close: async () => {},
};

/** Listeners per channel, reset listeners and session watchers, shared by both strategies. */
export class ChangeListeners {
  private readonly channels = new Map<string, Set<(key: string) => void>>();
  private readonly resets = new Set<() => void>();
  private readonly watchers = new Map<string, Set<() => void>>();

  subscribe(channel: string, listener: (key: string) => void): () => void {
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  onReset(listener: () => void): () => void {
    this.resets.add(listener);
    return () => this.resets.delete(listener);
  }

  watch(id: string, onChange: () => void): () => void {
    let set = this.watchers.get(id);
    if (!set) this.watchers.set(id, (set = new Set()));
    set.add(onChange);
    return () => {
      set.delete(onChange);
      if (set.size === 0 && this.watchers.get(id) === set) this.watchers.delete(id);
    };
  }

  announce(channel: string, key: string): void {
    for (const listener of [...(this.channels.get(channel) ?? [])]) listener(key);
    if (channel === 'kassa_checkout_session') for (const onChange of [...(this.watchers.get(key) ?? [])]) onChange();
  }

  reset(): void {
    for (const listener of [...this.resets]) listener();
    for (const set of [...this.watchers.values()]) for (const onChange of [...set]) onChange();
  }
}
