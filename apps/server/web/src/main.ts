import { Api } from "./api.js";
import { gaps, groupRanges, planRanges, rangeLabel, rangeSize } from "./ranges.js";
import {
  drawTimeline,
  STATE_COLORS,
  type StateBar,
  stateOf,
  type VersionFacts,
  type VersionState,
} from "./timeline.js";
import type {
  BranchList,
  CleanupBody,
  Datasets,
  Doctor,
  Job,
  JobAccepted,
  Jobs,
  LeaseList,
  Plan,
  Readiness,
  RunHistory,
  Stats,
  Status,
  Usage,
  VersionsPage,
} from "./wire.js";
import { describeCapability, describeSkew, formatBytes, formatDuration } from "./words.js";

const $ = <T extends HTMLElement>(selector: string) => document.querySelector<T>(selector)!;
let api: Api | null = null;
let dataset = "";

const status = (text: string, error = false) => {
  $("#status").textContent = text;
  $("#status").className = error ? "error" : "";
};

type Cell = string | number | Node;

function table(selector: string, headers: string[], rows: Cell[][]): void {
  const el = $<HTMLTableElement>(selector);
  el.replaceChildren();
  const head = el.createTHead().insertRow();
  for (const h of headers) head.appendChild(document.createElement("th")).textContent = h;
  const body = el.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const cell of row) {
      const td = tr.insertCell();
      if (cell instanceof Node) td.appendChild(cell);
      else td.textContent = String(cell);
      if (typeof cell === "number") td.className = "num";
    }
  }
}

/** A coloured state label. */
function badge(state: string, color: string): HTMLElement {
  const span = Object.assign(document.createElement("span"), {
    className: "state",
    textContent: state,
  });
  span.dataset.state = state;
  span.style.background = color;
  return span;
}

const base = () => `/v1/datasets/${encodeURIComponent(dataset)}`;
const count = (n: number, what: string) =>
  `${n.toLocaleString("en-US")} ${what}${n === 1 ? "" : "s"}`;

async function showTimeline(): Promise<void> {
  if (!api) return;
  const [branches, st] = await Promise.all([
    api.get<BranchList>(`${base()}/branches`),
    api.get<Status>(`${base()}/status`),
  ]);
  const facts: VersionFacts[] = [];
  for (const b of branches.branches) {
    let after: number | null = 0;
    while (after !== null) {
      const page: VersionsPage = await api.get(
        `${base()}/versions?branch=${encodeURIComponent(b.name)}&limit=1000&after=${after}`,
      );
      for (const v of page.versions) {
        const retirement = st.retirements.find(
          (r) => r.branch === b.name && r.versions.includes(v.version),
        );
        facts.push({
          branch: b.name,
          version: v.version,
          time: v.lastModified,
          tags: v.tags,
          leases: st.leases.filter((l) => l.branch === b.name && l.version === v.version).length,
          retirement: retirement?.state ?? null,
        });
      }
      after = page.nextAfter;
    }
  }
  type Row = { branch: string; version: number; state: VersionState; facts: VersionFacts | null };
  const rows: Row[] = facts.map((f) => ({
    branch: f.branch,
    version: f.version,
    state: stateOf(f),
    facts: f,
  }));
  // Version numbers of a branch are consecutive: a gap is versions a cleanup retired. A
  // branch forked from another starts where its parent's lineage left it, so only gaps after
  // its first listed version count there.
  for (const b of branches.branches) {
    const listed = facts.filter((f) => f.branch === b.name).map((f) => f.version);
    if (listed.length === 0) continue;
    const start = b.parent ? Math.min(...listed) : 1;
    for (const gap of gaps(listed, start)) {
      for (let v = gap.from; v <= gap.to; v++) {
        rows.push({ branch: b.name, version: v, state: "retired", facts: null });
      }
    }
  }
  // Tagged versions each keep their own row (their tags differ); every other state groups.
  const ranges = groupRanges(
    rows,
    (r) => `${r.state}:${r.state === "tagged" ? (r.facts?.tags.join(",") ?? "") : ""}`,
  );
  const detailOf = (items: readonly Row[]) => {
    const tags = [...new Set(items.flatMap((r) => r.facts?.tags ?? []))];
    const leases = items.reduce((n, r) => n + (r.facts?.leases ?? 0), 0);
    const retirement = items.find((r) => r.facts?.retirement)?.facts?.retirement;
    const forks = branches.branches.filter(
      (b) =>
        b.parent &&
        items.some((r) => r.branch === b.parent!.branch && r.version === b.parent!.version),
    );
    return [
      tags.length ? `tags: ${tags.join(", ")}` : "",
      forks.length ? `fork point of ${forks.map((b) => b.name).join(", ")}` : "",
      leases ? count(leases, "lease") : "",
      retirement ? `retirement ${retirement}` : "",
    ]
      .filter(Boolean)
      .join("; ");
  };
  const bars: StateBar[] = ranges.map((r) => ({
    branch: r.branch,
    from: r.from,
    to: r.to,
    state: r.items[0]!.state,
    detail: detailOf(r.items),
  }));
  const names = branches.branches.map((b) => b.name);
  drawTimeline($("#chart"), names, bars);
  table(
    "#timeline-table",
    ["Branch", "Versions", "Count", "State", "Details", "Committed (storage time)", "Forked from"],
    ranges.map((r) => {
      const parent = branches.branches.find((b) => b.name === r.branch)?.parent;
      const listed = r.items.filter((i) => i.facts !== null);
      const first = listed[0]?.facts?.time;
      const last = listed[listed.length - 1]?.facts?.time;
      const state = r.items[0]!.state;
      const firstOfBranch = Math.min(
        ...facts.filter((f) => f.branch === r.branch).map((f) => f.version),
      );
      return [
        r.branch,
        rangeLabel(r),
        rangeSize(r),
        badge(state, STATE_COLORS[state]),
        detailOf(r.items),
        first === undefined ? "" : first === last ? first : `${first} … ${last}`,
        parent && r.from === firstOfBranch ? `${parent.branch}@${parent.version}` : "",
      ];
    }),
  );
}

async function showLeases(): Promise<void> {
  if (!api) return;
  const res = await api.get<LeaseList>(`${base()}/leases`);
  if (res.leases.length === 0) {
    table("#leases-table", ["Leases"], [["No reader holds a lease on this dataset."]]);
    return;
  }
  table(
    "#leases-table",
    ["Holder", "Version", "Time left (storage time)", "TTL", "Expires (storage time)", "Lease id"],
    res.leases.map((l) => [
      l.holder ?? "(no holder label)",
      `${l.branch}@${l.version}`,
      !l.active
        ? "expired"
        : l.timeLeftMs === null || l.timeLeftMs === undefined
          ? "?"
          : formatDuration(l.timeLeftMs),
      l.ttlMs === null ? "?" : formatDuration(l.ttlMs),
      l.expiresAt ?? "?",
      l.leaseId,
    ]),
  );
}

function showPlan(stats: Stats): void {
  const ranges = planRanges(stats);
  $("#plan-summary").textContent =
    `Would retire ${count(stats.retired.length, "version")}, keep ${stats.retained.length.toLocaleString("en-US")}, delete ${count(stats.objectsDeleted.total, "object")} (${formatBytes(stats.bytesDeleted)}).`;
  table(
    "#plan-table",
    ["Branch", "Versions", "Count", "Decision", "Why"],
    ranges.map((r) => {
      const first = r.items[0]!;
      // Every reason the version is kept, one chip each.
      const list = document.createElement("span");
      list.className = "reasons";
      for (const reason of first.reasons) {
        const chip = list.appendChild(document.createElement("span"));
        chip.className = "reason";
        chip.textContent = reason;
      }
      return [
        r.branch,
        rangeLabel(r),
        rangeSize(r),
        badge(first.decision, first.decision === "retire" ? "#868e96" : "#2f6fde"),
        first.decision === "retire" ? "no reason to keep it" : list,
      ];
    }),
  );
}

async function showCleanup(): Promise<void> {
  if (!api) return;
  const [jobs, history] = await Promise.all([
    api.get<Jobs>(`${base()}/cleanup/jobs`),
    api.get<RunHistory>(`${base()}/cleanup/history`),
  ]);
  $("#runs-summary").textContent =
    history.runs.length === 0
      ? "No run has left a summary on the store yet."
      : `${count(history.runs.length, "run")} on record freed ${formatBytes(history.bytesFreed)}.`;
  table(
    "#runs-table",
    [
      "Ended (storage time)",
      "Started by",
      "Kind",
      "Outcome",
      "Retired",
      "Objects deleted",
      "Freed",
    ],
    history.runs.map((r) => [
      r.recordedAt,
      r.jobId ? `${r.trigger} (job ${r.jobId})` : r.trigger,
      r.mode,
      r.error ? `${r.outcome}: ${r.error.message}` : r.outcome,
      r.retiredVersions + r.finishedVersions === 0
        ? "nothing"
        : [...r.retiredRanges, ...r.finishedRanges]
            .map((g) => `${g.branch} ${rangeLabel(g)}`)
            .join(", ") + (r.rangesTruncated ? ", …" : ""),
      r.objectsDeleted.total ?? 0,
      formatBytes(r.bytesDeleted),
    ]),
  );
  table(
    "#jobs-table",
    ["Job", "Kind", "Started by", "State", "Started", "Retired"],
    jobs.jobs.map((j) => [
      j.id,
      j.kind,
      j.trigger,
      j.state,
      j.startedAt,
      j.stats?.retired.length ?? "-",
    ]),
  );
  try {
    showPlan((await api.get<Plan>(`${base()}/cleanup/plan`)).stats);
  } catch {
    $("#plan-summary").textContent = "No plan yet: make one above (plans are kept on the store).";
    $("#plan-table").replaceChildren();
  }
}

async function showStore(): Promise<void> {
  const ready = (await (await fetch("/readyz")).json()) as Readiness;
  const mine = ready.datasets.find((d) => d.name === dataset);
  if (mine) {
    $("#skew").textContent = describeSkew(mine.clockSkewMs);
    table(
      "#store-table",
      ["Property", "What it means"],
      [
        ["Ready", mine.ready ? `yes (${mine.detail})` : `no: ${mine.detail}`],
        ["Clock", describeSkew(mine.clockSkewMs)],
        ...Object.entries(mine.capabilities ?? {}).map(([k, v]) => {
          const d = describeCapability(k, v);
          return [d.name, d.text];
        }),
      ],
    );
  }
  if (!api) return;
  const [doctor, usage] = await Promise.all([
    api.get<Doctor>(`${base()}/doctor`),
    api.get<Usage>(`${base()}/usage`),
  ]);
  table(
    "#areas-table",
    ["Area", "Objects", "Bytes"],
    usage.areas.map((a) => [a.area, a.objects, formatBytes(a.bytes)]),
  );
  table(
    "#checks-table",
    ["Check", "Status", "Detail"],
    [["verdict", doctor.verdict, ""], ...doctor.checks.map((c) => [c.id, c.status, c.detail])],
  );
}

/** Bytes used (one listing of the dataset) and freed (the store's run history), on every view. */
async function showUsage(): Promise<void> {
  if (!api) return;
  const [usage, history] = await Promise.all([
    api.get<Usage>(`${base()}/usage`),
    api.get<RunHistory>(`${base()}/cleanup/history`),
  ]);
  $("#usage").textContent =
    `Stored: ${formatBytes(usage.bytes)} in ${count(usage.objects, "object")}. ` +
    `Freed: ${formatBytes(history.bytesFreed)} by the last ${count(history.runs.length, "cleanup run")} on record.`;
}

const VIEWS: Record<string, () => Promise<void>> = {
  timeline: showTimeline,
  leases: showLeases,
  cleanup: showCleanup,
  store: showStore,
};
let current = "timeline";

async function render(): Promise<void> {
  for (const name of Object.keys(VIEWS)) $(`#view-${name}`).hidden = name !== current;
  for (const b of document.querySelectorAll<HTMLButtonElement>("nav button"))
    b.classList.toggle("active", b.dataset.view === current);
  try {
    await Promise.all([VIEWS[current]!(), showUsage()]);
    status(`${dataset}: ${current} loaded`);
  } catch (error) {
    status(String(error instanceof Error ? error.message : error), true);
  }
}

function policy(): CleanupBody["policy"] {
  return {
    retainVersions: Number($<HTMLInputElement>("#retain").value),
    minVersionAgeMs: Number($<HTMLInputElement>("#min-age").value) * 1000,
  };
}

$("#plan-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!api) return;
  try {
    showPlan((await api.post<Plan>(`${base()}/cleanup/plan`, { policy: policy() })).stats);
  } catch (error) {
    status(String(error instanceof Error ? error.message : error), true);
  }
});

$("#run").addEventListener("click", async () => {
  if (!api) return;
  try {
    const { job } = await api.post<JobAccepted>(`${base()}/cleanup/jobs`, { policy: policy() });
    $("#progress").textContent = `job ${job.id}: starting`;
    await api.follow(`${base()}/cleanup/jobs/${job.id}/events`, (type, data) => {
      const j = data as Job;
      $("#progress").textContent =
        type === "done"
          ? `job ${j.id}: ${j.state}${j.stats ? `, retired ${j.stats.retired.length}, freed ${formatBytes(j.stats.bytesDeleted)}` : ""}${j.error ? ` (${j.error.detail})` : ""}`
          : `job ${j.id}: ${j.progress?.phase ?? "starting"} ${j.progress?.done ?? 0}${j.progress?.total === undefined ? "" : `/${j.progress.total}`}`;
    });
    await Promise.all([showCleanup(), showUsage()]);
  } catch (error) {
    status(String(error instanceof Error ? error.message : error), true);
  }
});

for (const b of document.querySelectorAll<HTMLButtonElement>("nav button")) {
  b.addEventListener("click", () => {
    current = b.dataset.view ?? "timeline";
    void render();
  });
}

$("#dataset").addEventListener("change", () => {
  dataset = $<HTMLSelectElement>("#dataset").value;
  void render();
});

$("#connect").addEventListener("submit", async (event) => {
  event.preventDefault();
  const token = $<HTMLInputElement>("#token").value.trim();
  if (token === "") {
    status("Paste a token first (see below).", true);
    return;
  }
  await connect(token);
});

async function connect(token: string): Promise<void> {
  api = new Api(token);
  try {
    const { datasets } = await api.get<Datasets>("/v1/datasets");
    sessionStorage.setItem("holdfast-token", token);
    const select = $<HTMLSelectElement>("#dataset");
    select.replaceChildren(
      ...datasets.map((d) =>
        Object.assign(document.createElement("option"), { value: d.name, textContent: d.name }),
      ),
    );
    dataset = datasets[0]?.name ?? "";
    $("#signin").hidden = true;
    $("#app").hidden = false;
    await render();
  } catch (error) {
    api = null;
    sessionStorage.removeItem("holdfast-token");
    $("#signin").hidden = false;
    $("#app").hidden = true;
    const message = String(error instanceof Error ? error.message : error);
    status(
      message.startsWith("401")
        ? `${message}: this token is not known to the server (see below for how to get one)`
        : message,
      true,
    );
  }
}

const saved = sessionStorage.getItem("holdfast-token");
if (saved) void connect(saved);
else status("Not signed in: paste a token to start.");
