import { CustomChart } from "echarts/charts";
import { GridComponent, LegendComponent, TooltipComponent } from "echarts/components";
import * as echarts from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { rangeLabel, rangeSize } from "./ranges.js";

echarts.use([CustomChart, GridComponent, LegendComponent, TooltipComponent, CanvasRenderer]);

/** What protects or ends a version, strongest first. */
export const STATES = ["retiring", "leased", "tagged", "kept", "retired"] as const;
export type VersionState = (typeof STATES)[number];

export const STATE_COLORS: Record<VersionState, string> = {
  retiring: "#d9480f",
  leased: "#2b8a3e",
  tagged: "#e0a800",
  kept: "#2f6fde",
  retired: "#adb5bd",
};

/** What the dashboard knows of one listed version. */
export interface VersionFacts {
  branch: string;
  version: number;
  time: string;
  tags: string[];
  leases: number;
  /** The state of the retirement record naming it (draining, sealed, committed), or null. */
  retirement: string | null;
}

/** The state a listed version is drawn in: the strongest reason that applies. */
export function stateOf(v: VersionFacts): VersionState {
  if (v.retirement !== null) return "retiring";
  if (v.leases > 0) return "leased";
  if (v.tags.length > 0) return "tagged";
  return "kept";
}

/** One bar of the timeline: a range of versions of a branch in one state. */
export interface StateBar {
  branch: string;
  from: number;
  to: number;
  state: VersionState;
  detail: string;
}

/**
 * Draws each branch as a row of bars along the version axis, one bar per range of
 * versions in one state: a 3,000-version table is a handful of bars, never a smear of points.
 */
export function drawTimeline(element: HTMLElement, branches: string[], bars: StateBar[]): void {
  const chart = echarts.getInstanceByDom(element) ?? echarts.init(element);
  const maxVersion = Math.max(1, ...bars.map((b) => b.to));
  chart.setOption(
    {
      animation: false,
      tooltip: {
        trigger: "item",
        formatter: (item: { data: { name: string } }) => item.data.name,
      },
      legend: { top: 0, data: [...STATES] },
      grid: { left: 110, right: 30, top: 40, bottom: 40 },
      xAxis: { type: "value", name: "version", min: 0.5, max: maxVersion + 0.5 },
      yAxis: { type: "category", data: branches, inverse: true },
      series: STATES.map((state) => ({
        name: state,
        type: "custom",
        itemStyle: { color: STATE_COLORS[state] },
        encode: { x: [0, 1], y: 2 },
        renderItem: (
          _params: unknown,
          api: {
            value: (i: number) => number;
            coord: (p: [number, number]) => [number, number];
            size: (p: [number, number]) => [number, number];
            style: () => Record<string, unknown>;
          },
        ) => {
          const start = api.coord([api.value(0) - 0.5, api.value(2)]);
          const end = api.coord([api.value(1) + 0.5, api.value(2)]);
          const height = api.size([0, 1])[1] * 0.55;
          return {
            type: "rect",
            shape: {
              x: start[0],
              y: start[1] - height / 2,
              width: Math.max(3, end[0] - start[0]),
              height,
            },
            style: api.style(),
          };
        },
        data: bars
          .filter((b) => b.state === state)
          .map((b) => ({
            value: [b.from, b.to, branches.indexOf(b.branch)],
            name: `${b.branch} ${rangeLabel(b)} (${rangeSize(b)}): ${b.state}${b.detail ? `, ${b.detail}` : ""}`,
          })),
      })),
    },
    true,
  );
}
