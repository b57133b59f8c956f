import { LineChart, ScatterChart } from "echarts/charts";
import { GridComponent, LegendComponent, TooltipComponent } from "echarts/components";
import * as echarts from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";

echarts.use([
  ScatterChart,
  LineChart,
  GridComponent,
  LegendComponent,
  TooltipComponent,
  CanvasRenderer,
]);

/** One version point on the timeline, with the states that explain its fate. */
export interface TimelinePoint {
  branch: string;
  version: number;
  time: string;
  tags: string[];
  leases: number;
  retirement: string | null;
}

/** A fork: a branch's first version descends from a parent version. */
export interface Fork {
  branch: string;
  parent: { branch: string; version: number; time: string };
  time: string;
}

const STATES = ["retiring", "leased", "tagged", "version"] as const;
const COLORS: Record<(typeof STATES)[number], string> = {
  retiring: "#d9480f",
  leased: "#2b8a3e",
  tagged: "#e0a800",
  version: "#2f6fde",
};

/** The state a point is drawn in: the strongest reason that applies. */
export function stateOf(p: TimelinePoint): (typeof STATES)[number] {
  if (p.retirement !== null) return "retiring";
  if (p.leases > 0) return "leased";
  if (p.tags.length > 0) return "tagged";
  return "version";
}

/** Draws versions by branch over time (ECharts): one series per state, forks as lines. */
export function drawTimeline(element: HTMLElement, points: TimelinePoint[], forks: Fork[]): void {
  const chart = echarts.getInstanceByDom(element) ?? echarts.init(element);
  const branches = [...new Set(points.map((p) => p.branch).concat(forks.map((f) => f.branch)))];
  chart.setOption(
    {
      animation: false,
      tooltip: {
        trigger: "item",
        formatter: (item: { data: { value: [string, string]; name: string } }) => item.data.name,
      },
      legend: { top: 0, data: [...STATES, "fork"] },
      grid: { left: 90, right: 30, top: 40, bottom: 40 },
      xAxis: { type: "time" },
      yAxis: { type: "category", data: branches },
      series: [
        ...STATES.map((state) => ({
          name: state,
          type: "scatter",
          symbolSize: 14,
          itemStyle: { color: COLORS[state] },
          data: points
            .filter((p) => stateOf(p) === state)
            .map((p) => ({
              value: [p.time, p.branch],
              name: `${p.branch}@${p.version}${p.tags.length ? ` tags: ${p.tags.join(", ")}` : ""}${p.leases ? ` leases: ${p.leases}` : ""}${p.retirement ? ` retirement: ${p.retirement}` : ""}`,
            })),
        })),
        ...forks.map((f) => ({
          name: "fork",
          type: "line",
          lineStyle: { type: "dashed", color: "#868e96" },
          symbol: "none",
          data: [
            {
              value: [f.parent.time, f.parent.branch],
              name: `${f.branch} from ${f.parent.branch}@${f.parent.version}`,
            },
            { value: [f.time, f.branch], name: f.branch },
          ],
        })),
      ],
    },
    true,
  );
}
