import type { Registry } from 'prom-client';

/** A series' labels as prom-client files them. */
type SeriesLabels = { readonly method: string; readonly route: string; readonly status: string };

interface Series {
  readonly labels: SeriesLabels;
  /** Observations per bucket, not cumulative (the last slot: above every bound). */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** One exported value, as prom-client's registry formats a histogram's (Histogram.getForPromString). */
interface ExportedValue {
  readonly labels: { readonly le?: number | '+Inf' };
  readonly sharedLabels: SeriesLabels;
  readonly value: number;
  readonly metricName: string;
  /** Buckets carry none (null), as Histogram's do without exemplars; sum and count carry no such field. */
  readonly exemplar?: null;
}

/**
 * `kassa_http_request_duration_seconds`, exported as prom-client's Histogram would, but counted without its per-call
 * label checks and string building (docs/benchmarks.md). Labels are bounded: methods, route patterns, statuses.
 */
export class HttpDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();
  /** Every series in the order of its first request (the order Histogram exports them in). */
  private readonly ordered: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    // prom-client's registry takes any metric with a name, get() and reset() (what Histogram offers it).
    registry.registerMetric(this as never);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    let byRoute = this.series.get(method);
    if (byRoute === undefined) this.series.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) byRoute.set(route, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) {
      series = {
        labels: { method, route, status: String(status) },
        counts: new Float64Array(this.bounds.length + 1),
        sum: 0,
        count: 0,
      };
      byStatus.set(status, series);
      this.ordered.push(series);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket++;
    series.counts[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** What the registry prints (prom-client: Histogram.getForPromString). */
  getForPromString(): { name: string; help: string; type: string; values: ExportedValue[]; aggregator: string } {
    const values: ExportedValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.ordered) {
      const shared = series.labels;
      let below = 0;
      this.bounds.forEach((le, index) => {
        below += series.counts[index]!;
        values.push({ labels: { le }, sharedLabels: shared, value: below, metricName: bucketName, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: shared, value: series.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: shared, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: shared, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same values with every label on the value (prom-client: Histogram.get, for getMetricsAsJSON). */
  get() {
    const exported = this.getForPromString();
    return {
      ...exported,
      values: exported.values.map(({ labels, sharedLabels, ...value }) => ({
        ...value,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  reset(): void {
    this.series.clear();
    this.ordered.length = 0;
  }
}
