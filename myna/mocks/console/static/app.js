// The Myna console: four pages over the admin API and the console API (see console/app.py).
// The admin token comes from the URL fragment (#token=..., never sent to the server) or a form,
// is kept for the tab's session only, and goes out as a bearer token on every call.
import { h, render } from "preact";
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);
const ADMIN = "/_myna/admin";
const API = `${ADMIN}/console/api`;
const PAGES = ["model", "worlds", "calls", "results"];

// ---- the token and the API ---------------------------------------------------------------------

function takeTokenFromFragment() {
  const match = location.hash.match(/token=([^&]+)/);
  if (match) {
    sessionStorage.setItem("myna-admin-token", decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + "#model");
  }
  return sessionStorage.getItem("myna-admin-token");
}

class ApiError extends Error {}

async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${sessionStorage.getItem("myna-admin-token")}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(data?.error?.message ?? `${response.status}`);
  return data;
}

function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null });
  const reload = useCallback(() => {
    load().then((data) => setState({ data, error: null }), (error) => setState({ data: null, error }));
  }, deps);
  useEffect(reload, [reload]);
  return [state, reload, setState];
}

// ---- shell -------------------------------------------------------------------------------------

function TokenForm({ onToken }) {
  const submit = (event) => {
    event.preventDefault();
    const token = new FormData(event.target).get("token");
    sessionStorage.setItem("myna-admin-token", token);
    onToken(token);
  };
  return html`<form class="token" onSubmit=${submit}>
    <h1>Myna console</h1>
    <label>Admin token <input name="token" type="password" data-testid="token" required /></label>
    <button type="submit">Open</button>
  </form>`;
}

function currentPage() {
  const page = location.hash.replace(/^#/, "").split("/")[0];
  return PAGES.includes(page) ? page : "model";
}

function App() {
  const [token, setToken] = useState(takeTokenFromFragment());
  const [page, setPage] = useState(currentPage());
  useEffect(() => {
    const follow = () => setPage(currentPage());
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  if (!token) return html`<${TokenForm} onToken=${setToken} />`;
  const view = { model: ModelPage, worlds: WorldsPage, calls: CallsPage, results: ResultsPage }[page];
  return html`<header>
      <strong>Myna</strong>
      <nav>${PAGES.map((name) => html`<a href="#${name}" class=${name === page ? "on" : ""}
        data-testid="nav-${name}">${name}</a>`)}</nav>
    </header>
    <main><${view} /></main>`;
}

function Failure({ error }) {
  return html`<p class="error" role="alert">${String(error.message ?? error)}</p>`;
}

// ---- model -------------------------------------------------------------------------------------

function ModelPage() {
  const [state, , setState] = useLoad(() => call("GET", `${API}/model`), []);
  const [notice, setNotice] = useState(null);
  if (state.error) return html`<${Failure} error=${state.error} />`;
  if (!state.data) return html`<p>Loading the model…</p>`;
  const model = state.data;
  const edit = async (change) => {
    try {
      setState({ data: await call("POST", `${API}/facts`, change), error: null });
      setNotice("Saved to the model file; the mock serves it from its next start.");
    } catch (error) {
      setNotice(`Not saved: ${error.message}`);
    }
  };
  return html`<h1>${model.title}</h1>
    ${notice && html`<p class="notice" data-testid="notice">${notice}</p>`}
    <h2>Resources</h2>
    ${model.resources.map((resource) => html`<${ResourceView} resource=${resource} />`)}
    <h2>State machines</h2>
    ${model.resources.flatMap((resource) => resource.machines.map((machine) => html`
      <${MachineGraph} resource=${resource.name} machine=${machine} />`))}
    <h2>Operations</h2>
    <table><thead><tr><th>id</th><th>kind</th><th>method</th><th>path</th><th>resource</th></tr></thead>
      <tbody>${model.operations.map((op) => html`<tr>
        <td>${op.id}</td><td>${op.kind}</td><td>${op.method}</td><td><code>${op.path}</code></td>
        <td>${op.resource ?? ""}</td></tr>`)}</tbody></table>
    <h2>Facts, weakest first</h2>
    <${FactsTable} facts=${model.facts} editable=${model.editable} onEdit=${edit} />`;
}

function ResourceView({ resource }) {
  const machines = resource.machines.map((machine) => machine.field).join(", ");
  return html`<details class="resource" data-testid="resource-${resource.name}">
    <summary><strong>${resource.name}</strong> <small>id ${resource.id_field},
      ${resource.fields.length} fields${machines && `, states in ${machines}`}</small></summary>
    <table><thead><tr><th>field</th><th>type</th><th>roles</th><th>references</th></tr></thead>
      <tbody>${resource.fields.map((field) => html`<tr>
        <td>${field.name}</td><td>${field.type ?? ""}</td><td>${field.roles.join(", ")}</td>
        <td>${field.reference ?? ""}</td></tr>`)}</tbody></table>
  </details>`;
}

// A state machine drawn left to right: each state in the column of its distance from the
// states records start in; edges are labelled with the operation that makes the move.
function layout(machine) {
  const depth = new Map();
  const queue = machine.initial.length ? [...machine.initial] : machine.states.slice(0, 1);
  queue.forEach((state) => depth.set(state, 0));
  while (queue.length) {
    const state = queue.shift();
    for (const edge of machine.transitions) {
      if (edge.source === state && !depth.has(edge.target)) {
        depth.set(edge.target, depth.get(state) + 1);
        queue.push(edge.target);
      }
    }
  }
  const columns = new Map();
  const last = Math.max(0, ...depth.values());
  for (const state of machine.states) {
    const column = depth.has(state) ? depth.get(state) : last + 1;
    columns.set(column, [...(columns.get(column) ?? []), state]);
  }
  const at = new Map();
  for (const [column, states] of columns) {
    states.forEach((state, row) => at.set(state, { x: 30 + column * 170, y: 30 + row * 70 }));
  }
  const width = 30 + (Math.max(...columns.keys()) + 1) * 170;
  const height = 30 + Math.max(...[...columns.values()].map((s) => s.length)) * 70;
  return { at, width, height };
}

function MachineGraph({ resource, machine }) {
  const { at, width, height } = useMemo(() => layout(machine), [machine]);
  const label = (state) => (machine.labels[state] ? `${state} ${machine.labels[state]}` : state);
  const edges = machine.transitions.filter((edge) => edge.source && edge.source !== edge.target);
  return html`<figure data-testid="machine-${resource}.${machine.field}">
    <figcaption>${resource}.${machine.field}</figcaption>
    <svg width=${width} height=${height} role="img" aria-label="state machine of ${machine.field}">
      <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7"
        markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" /></marker></defs>
      ${edges.map((edge) => {
        const a = at.get(edge.source);
        const b = at.get(edge.target);
        if (!a || !b) return null;
        return html`<g class="edge"><line x1=${a.x + 120} y1=${a.y + 15} x2=${b.x} y2=${b.y + 15}
          marker-end="url(#arrow)" /><text x=${(a.x + 120 + b.x) / 2} y=${(a.y + b.y) / 2 + 10}
          >${edge.operation ?? ""}</text></g>`;
      })}
      ${machine.states.map((state) => {
        const p = at.get(state);
        const initial = machine.initial.includes(state);
        return html`<g class=${initial ? "state initial" : "state"} data-testid="state-${state}">
          <rect x=${p.x} y=${p.y} width="120" height="30" rx="8" />
          <text x=${p.x + 60} y=${p.y + 20} text-anchor="middle">${label(state)}</text></g>`;
      })}
    </svg></figure>`;
}

function FactsTable({ facts, editable, onEdit }) {
  return html`<table class="facts"><thead><tr><th>where</th><th>fact</th><th>confidence</th>
      <th>samples</th><th>examples</th><th>pinned</th>${editable && html`<th>edit</th>`}</tr></thead>
    <tbody>${facts.map((fact) => html`<tr data-testid="fact-${fact.address}"
        class=${fact.pinned ? "pinned" : ""}>
      <td>${fact.where}</td><td>${fact.fact}</td>
      <td><meter min="0" max="1" value=${fact.confidence}></meter> ${fact.confidence.toFixed(2)}</td>
      <td>${fact.samples}</td><td class="examples">${fact.examples.join(", ")}</td>
      <td>${fact.pinned ? "pinned" : ""}</td>
      ${editable && html`<td>
        <button data-testid="pin" onClick=${() => onEdit({ address: fact.address,
          pinned: !fact.pinned })}>${fact.pinned ? "Unpin" : "Pin"}</button>
        ${fact.roles && html`<${RolesEditor} fact=${fact} onEdit=${onEdit} />`}</td>`}
    </tr>`)}</tbody></table>`;
}

function RolesEditor({ fact, onEdit }) {
  const toggle = (role) => onEdit({ address: fact.address, roles: { [role]: !fact.roles[role] } });
  return html`<span class="roles">${Object.entries(fact.roles).map(([role, on]) => html`<label>
    <input type="checkbox" checked=${on} data-testid="role-${role}"
      onChange=${() => toggle(role)} />${role}</label>`)}</span>`;
}

// ---- worlds ------------------------------------------------------------------------------------

function WorldsPage() {
  const [state, reload] = useLoad(() => call("GET", `${ADMIN}/worlds`), []);
  const [message, setMessage] = useState(null);
  const [diff, setDiff] = useState(null);
  if (state.error) return html`<${Failure} error=${state.error} />`;
  if (!state.data) return html`<p>Loading worlds…</p>`;
  const worlds = state.data.worlds;
  const act = (work, done) => work.then(() => { setMessage(done); reload(); },
    (error) => setMessage(`Refused: ${error.message}`));
  const fork = (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const body = { fork_of: form.get("source") };
    if (form.get("id")) body.id = form.get("id");
    act(call("POST", `${ADMIN}/worlds`, body), `Forked ${body.fork_of}.`);
  };
  const compare = async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    try {
      const { snapshot } = await call("POST", `${ADMIN}/worlds/${form.get("b")}/snapshot`, {});
      const found = await call("GET",
        `${ADMIN}/worlds/${form.get("a")}/diff?against=${encodeURIComponent(snapshot)}`);
      setDiff({ a: form.get("a"), b: form.get("b"), changes: found.changes });
    } catch (error) {
      setMessage(`Refused: ${error.message}`);
    }
  };
  const options = worlds.map((world) => html`<option value=${world.id}>${world.id}</option>`);
  return html`<h1>Worlds</h1>
    ${message && html`<p class="notice" data-testid="notice">${message}</p>`}
    <table data-testid="worlds"><thead><tr><th>world</th><th>base snapshot</th><th>created</th>
      <th></th></tr></thead>
      <tbody>${worlds.map((world) => html`<tr data-testid="world-${world.id}">
        <td>${world.id}</td><td><code>${world.base_snapshot ?? ""}</code></td>
        <td>${new Date(world.created_at * 1000).toISOString()}</td>
        <td><button data-testid="reset-${world.id}" onClick=${() => act(call("POST",
          `${ADMIN}/worlds/${world.id}/reset`, {}), `Reset ${world.id}.`)}>Reset</button></td>
      </tr>`)}</tbody></table>
    <form class="inline" onSubmit=${fork}><strong>Fork</strong>
      <select name="source" data-testid="fork-source">${options}</select>
      <input name="id" placeholder="new world id" data-testid="fork-id" />
      <button type="submit" data-testid="fork">Fork</button></form>
    <form class="inline" onSubmit=${compare}><strong>Diff</strong>
      <select name="a" data-testid="diff-a">${options}</select> against
      <select name="b" data-testid="diff-b">${options}</select>
      <button type="submit" data-testid="diff">Compare</button></form>
    ${diff && html`<${DiffTable} diff=${diff} />`}`;
}

function changedFields(change) {
  const before = change.before ?? {};
  const after = change.after ?? {};
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]));
}

function DiffTable({ diff }) {
  return html`<section data-testid="diff-result">
    <h2>${diff.a} against ${diff.b}: ${diff.changes.length} record(s) differ</h2>
    <table><thead><tr><th>resource</th><th>record</th><th>change</th><th>fields</th></tr></thead>
      <tbody>${diff.changes.map((change) => html`<tr>
        <td>${change.resource}</td><td><code>${change.record_id}</code></td><td>${change.kind}</td>
        <td>${changedFields(change).map((name) => html`<div><code>${name}</code>:
          ${JSON.stringify((change.before ?? {})[name])} → ${JSON.stringify((change.after ?? {})[name])}
        </div>`)}</td></tr>`)}</tbody></table></section>`;
}

// ---- calls -------------------------------------------------------------------------------------

async function watch(world, onCall, signal) {
  const response = await fetch(`${API}/worlds/${encodeURIComponent(world)}/events`, {
    headers: { Authorization: `Bearer ${sessionStorage.getItem("myna-admin-token")}` },
    signal,
  });
  if (!response.ok) throw new ApiError((await response.json()).error.message);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split("\n").filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6)).join("\n");
      if (data) onCall(JSON.parse(data));
    }
  }
}

function decision(c) {
  if (c.decision) return `${c.decision.check}: ${c.decision.message}`;
  return c.status >= 400 ? `refused (${c.status})` : "accepted";
}

function CallsPage() {
  const [world, setWorld] = useState("default");
  const [calls, setCalls] = useState([]);
  const [error, setError] = useState(null);
  const [open, setOpen] = useState(null);
  useEffect(() => {
    const stop = new AbortController();
    setCalls([]);
    setError(null);
    watch(world, (arrived) => setCalls((shown) => [arrived, ...shown].slice(0, 500)), stop.signal)
      .catch((failure) => { if (failure.name !== "AbortError") setError(failure); });
    return () => stop.abort();
  }, [world]);
  const choose = (event) => {
    event.preventDefault();
    setWorld(new FormData(event.target).get("world"));
  };
  return html`<h1>Calls in <code data-testid="watched">${world}</code>, live</h1>
    <form class="inline" onSubmit=${choose}><input name="world" value=${world}
      data-testid="world" /><button type="submit">Watch</button></form>
    ${error && html`<${Failure} error=${error} />`}
    <table class="calls" data-testid="calls"><thead><tr><th>#</th><th>method</th><th>url</th>
      <th>status</th><th>ms</th><th>decision</th></tr></thead>
      <tbody>${calls.map((c) => html`<tr data-testid="call" class=${c.status >= 400 ? "refused" : ""}
          onClick=${() => setOpen(open === c.number ? null : c.number)}>
        <td>${c.number}</td><td>${c.method}</td><td><code>${c.url}</code></td><td>${c.status}</td>
        <td>${c.duration_ms}</td>
        <td data-testid="decision">${decision(c)}</td>
      </tr>${open === c.number && html`<tr class="detail"><td colspan="6">
        <h4>Request</h4><pre>${JSON.stringify(c.request, null, 2)}</pre>
        <h4>Answer</h4><pre>${JSON.stringify(c.response, null, 2)}</pre></td></tr>`}`)}
      </tbody></table>`;
}

// ---- results -----------------------------------------------------------------------------------

function ResultsPage() {
  const [state] = useLoad(() => call("GET", `${API}/results`), []);
  const [chosen, setChosen] = useState(null);
  const [content, setContent] = useState(null);
  useEffect(() => {
    if (chosen) call("GET", `${API}/results/${chosen}`).then(setContent, (error) => setContent({ error }));
  }, [chosen]);
  if (state.error) return html`<${Failure} error=${state.error} />`;
  if (!state.data) return html`<p>Loading results…</p>`;
  return html`<h1>Results</h1>
    ${state.data.files.length === 0 && html`<p>No results: start the mock with --results DIR.</p>`}
    <ul data-testid="result-files">${state.data.files.map((file) => html`<li>
      <a href="#results" data-testid="result-${file.name}" onClick=${() => setChosen(file.name)}>
        ${file.name}</a> <small>${file.kind}</small></li>`)}</ul>
    ${content?.error && html`<${Failure} error=${content.error} />`}
    ${content?.format?.startsWith("myna.itsmbench/") && html`<${BenchReport} result=${content} />`}
    ${content?.format?.startsWith("myna.episode/") && html`<${EpisodeView} episode=${content} />`}`;
}

function percent(value) {
  return value === undefined || value === null ? "–" : `${(value * 100).toFixed(1)}%`;
}

function BenchReport({ result }) {
  const [scenario, setScenario] = useState(null);
  const failing = [...new Set(result.trials.filter((t) => !t.passed).map((t) => t.scenario))];
  const scores = [["overall", result.overall], ...Object.entries(result.by_kind)];
  return html`<section data-testid="bench-report">
    <h2>ITSMBench: ${result.agent}, ${result.trials_per_scenario} trial(s) per scenario</h2>
    <table><thead><tr><th>scope</th><th>scenarios</th><th>pass^1</th><th>reward</th>
      <th>tool calls</th></tr></thead>
      <tbody>${scores.map(([scope, score]) => html`<tr><td>${scope}</td><td>${score.scenarios}</td>
        <td>${percent(score.pass_hat["1"])}</td><td>${score.reward.toFixed(2)}</td>
        <td>${score.tool_calls.toFixed(1)}</td></tr>`)}</tbody></table>
    <h3>Failing scenarios (${failing.length})</h3>
    <ul>${failing.map((name) => html`<li><a href="#results" data-testid="scenario-${name}"
      onClick=${() => setScenario(name)}>${name}</a></li>`)}</ul>
    ${scenario && html`<div data-testid="scenario-detail"><h3>${scenario}</h3>
      <table><thead><tr><th>trial</th><th>passed</th><th>reward</th><th>tool calls</th>
        <th>what happened</th></tr></thead>
        <tbody>${result.trials.filter((t) => t.scenario === scenario).map((t) => html`<tr>
          <td>${t.trial}</td><td>${t.passed ? "yes" : "no"}</td><td>${t.reward}</td>
          <td>${t.tool_calls}</td><td>${t.repercussion ?? ""}</td></tr>`)}</tbody></table></div>`}
  </section>`;
}

function EpisodeView({ episode }) {
  return html`<section data-testid="episode"><h2>Episode ${episode.id}</h2>
    <pre>${JSON.stringify(episode, null, 2)}</pre></section>`;
}

render(html`<${App} />`, document.getElementById("app"));
