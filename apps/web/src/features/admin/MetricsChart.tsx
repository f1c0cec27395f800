import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { AdminMetricsSample } from '@tidewire/protocol';
import { chartCaption, chartData, type ChartSpec } from './metrics-window.js';

const COLORS = ['#38bdf8', '#22c55e', '#f59e0b', '#ef4444'];
const WIDTH = 400;
const HEIGHT = 170;

/** One uPlot chart of a metrics window; `data-points` tells tests how many samples it draws. */
export function MetricsChart({ spec, samples }: { spec: ChartSpec; samples: readonly AdminMetricsSample[] }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);

  useEffect(() => {
    if (!host.current) return;
    plot.current = new uPlot({
      width: WIDTH,
      height: HEIGHT,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      // latency charts: log10 y axis, so the mean and p99 stay readable beside a 1,000x spike
      scales: spec.log === true ? { x: { time: true }, y: { distr: 3, log: 10 } } : { x: { time: true } },
      axes: [
        { stroke: '#8fa3ba', grid: { stroke: '#1e2b3b' }, ticks: { stroke: '#1e2b3b' } },
        { stroke: '#8fa3ba', grid: { stroke: '#1e2b3b' }, ticks: { stroke: '#1e2b3b' }, size: 56 },
      ],
      series: [{}, ...spec.series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length]!, width: 1.5, points: { show: false } }))],
    }, chartData(spec, []) as uPlot.AlignedData, host.current);
    return () => {
      plot.current?.destroy();
      plot.current = undefined;
    };
  }, [spec]);

  useEffect(() => {
    plot.current?.setData(chartData(spec, samples) as uPlot.AlignedData);
  }, [spec, samples]);

  const last = samples.at(-1);
  return (
    <figure className="admin-chart" data-testid={`chart-${spec.id}`} data-points={samples.length} data-scale={spec.log === true ? 'log' : 'linear'}>
      <figcaption>
        <span>{spec.title}</span>
        <span className="page-hint">
          {chartCaption(spec, last)}
        </span>
      </figcaption>
      <div ref={host} />
    </figure>
  );
}
