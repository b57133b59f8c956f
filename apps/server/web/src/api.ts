import type { Problem } from "./wire.js";

/** A small client of the holdfast API for the dashboard: bearer token, JSON, problem errors. */
export class Api {
  constructor(private readonly token: string) {}

  async get<T>(path: string): Promise<T> {
    return this.send<T>("GET", path);
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    return this.send<T>("POST", path, body);
  }

  /** Follows a job's server-sent events (fetch, since EventSource cannot send a token). */
  async follow(path: string, onEvent: (type: string, data: unknown) => void): Promise<void> {
    const res = await fetch(path, { headers: { authorization: `Bearer ${this.token}` } });
    if (!res.ok || !res.body) throw new Error(`events: ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end = buffer.indexOf("\n\n");
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const type = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data !== undefined) onEvent(type, JSON.parse(data));
        end = buffer.indexOf("\n\n");
      }
    }
  }

  private async send<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(path, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json: unknown = await res.json();
    if (!res.ok) {
      const problem = json as Partial<Problem>;
      const code = problem.code === undefined ? "" : ` (${problem.code})`;
      throw new Error(`${res.status}: ${problem.detail ?? "request failed"}${code}`);
    }
    return json as T;
  }
}
