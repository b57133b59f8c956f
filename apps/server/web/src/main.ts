import { Api } from "./api.js";
import { drawTimeline, type Fork, stateOf, type TimelinePoint } from "./timeline.js";
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
  Stats,
  Status,
  VersionsPage,
} from "./wire.js";

const $ = <T extends HTMLElement>(selector: string) => document.querySelector<T>(selector)!;
let api: Api | null = null;
let dataset = "";

const status = (text: string, error = false) => {
  $("#status").textContent = text;
  $("#status").className = error ? "error" : "";
};

function table(selector: string, headers: string[], rows: (string | number)[][]): void {
  const el = $<HTMLTableElement>(selector);
  el.replaceChildren();
  const head = el.createTHead().insertRow();
  for (const h of headers) head.appendChild(document.createElement("th")).textContent = h;
  const body = el.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const cell of row) tr.insertCell().textContent = String(cell);
  }
}

const base = () => `/v1/datasets/${encodeURIComponent(dataset)}`;

async function showTimeline(): Promise<void> {
  if (!api) return;
  const [branches, st] = await Promise.all([
    api.get<BranchList>(`${base()}/branches`),
    api.get<Status>(`${base()}/status`),
  ]);
  const points: TimelinePoint[] = [];
  const firstTime = new Map<string, string>();
  const timeOf = new Map<string, string>();
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
        points.push({
          branch: b.name,
          version: v.version,
          time: v.lastModified,
          tags: v.tags,
          leases: st.leases.filter((l) => l.branch === b.name && l.version === v.version).length,
          retirement: retirement?.state ?? null,
        });
        timeOf.set(`${b.name}@${v.version}`, v.lastModified);
        if (!firstTime.has(b.name)) firstTime.set(b.name, v.lastModified);
      }
      after = page.nextAfter;
    }
  }
  const forks: Fork[] = [];
  for (const b of branches.branches) {
    if (!b.parent) continue;
    const parentTime = timeOf.get(`${b.parent.branch}@${b.parent.version}`);
    if (parentTime === undefined) continue;
    forks.push({
      branch: b.name,
      parent: { ...b.parent, time: parentTime },
      time: firstTime.get(b.name) ?? parentTime,
    });
  }
  drawTimeline($("#chart"), points, forks);
  table(
    "#timeline-table",
    ["Branch", "Version", "State", "Tags", "Leases", "Forked from"],
    points.map((p) => {
      const parent = branches.branches.find((b) => b.name === p.branch)?.parent;
      return [
        p.branch,
        p.version,
        p.retirement ?? stateOf(p),
        p.tags.join(", "),
        p.leases,
        parent && firstTime.get(p.branch) === p.time ? `${parent.branch}@${parent.version}` : "",
      ];
    }),
  );
}

async function showLeases(): Promise<void> {
  if (!api) return;
  const res = await api.get<LeaseList>(`${base()}/leases`);
  table(
    "#leases-table",
    ["Lease (holder)", "Version", "TTL", "Expires (storage time)", "State"],
    res.leases.map((l) => [
      l.leaseId,
      `${l.branch}@${l.version}`,
      l.ttlMs === null ? "?" : `${l.ttlMs / 1000}s`,
      l.expiresAt ?? "?",
      l.active ? "active" : "expired",
    ]),
  );
  if (res.leases.length === 0) table("#leases-table", ["Lease (holder)"], [["no leases"]]);
}

function showPlan(stats: Stats): void {
  $("#plan-summary").textContent =
    `Would retire ${stats.retired.length} version(s), keep ${stats.retained.length}, delete ${stats.objectsDeleted.total} object(s).`;
  table(
    "#plan-table",
    ["Branch", "Version", "Decision"],
    [
      ...stats.retired.map((v) => [v.branch, v.version, "retire"]),
      ...stats.retained.map((v) => [v.branch, v.version, `keep: ${v.reason}`]),
    ],
  );
}

async function showCleanup(): Promise<void> {
  if (!api) return;
  const jobs = await api.get<Jobs>(`${base()}/cleanup/jobs`);
  table(
    "#jobs-table",
    ["Job", "Kind", "Trigger", "State", "Started", "Retired"],
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
    $("#plan-summary").textContent = "No plan yet: make one below (plans are kept on the store).";
  }
}

async function showStore(): Promise<void> {
  const ready = (await (await fetch("/readyz")).json()) as Readiness;
  const mine = ready.datasets.find((d) => d.name === dataset);
  if (!mine) return;
  table(
    "#store-table",
    ["Property", "Value"],
    [
      ["ready", `${mine.ready} (${mine.detail})`],
      [
        "clock skew (store - this server)",
        mine.clockSkewMs === null ? "?" : `${mine.clockSkewMs} ms`,
      ],
      ...Object.entries(mine.capabilities ?? {}).map(([k, v]) => [k, String(v)]),
    ],
  );
  if (!api) return;
  const doctor = await api.get<Doctor>(`${base()}/doctor`);
  table(
    "#checks-table",
    ["Check", "Status", "Detail"],
    [["verdict", doctor.verdict, ""], ...doctor.checks.map((c) => [c.id, c.status, c.detail])],
  );
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
    await VIEWS[current]!();
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
          ? `job ${j.id}: ${j.state}${j.stats ? `, retired ${j.stats.retired.length}` : ""}${j.error ? ` (${j.error.detail})` : ""}`
          : `job ${j.id}: ${j.progress?.phase ?? "starting"} ${j.progress?.done ?? 0}${j.progress?.total === undefined ? "" : `/${j.progress.total}`}`;
    });
    await showCleanup();
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
  sessionStorage.setItem("holdfast-token", token);
  await connect(token);
});

async function connect(token: string): Promise<void> {
  api = new Api(token);
  try {
    const { datasets } = await api.get<Datasets>("/v1/datasets");
    const select = $<HTMLSelectElement>("#dataset");
    select.replaceChildren(
      ...datasets.map((d) =>
        Object.assign(document.createElement("option"), { value: d.name, textContent: d.name }),
      ),
    );
    dataset = datasets[0]?.name ?? "";
    await render();
  } catch (error) {
    api = null;
    status(String(error instanceof Error ? error.message : error), true);
  }
}

const saved = sessionStorage.getItem("holdfast-token");
if (saved) void connect(saved);
