// The A/B dashboard: reads /v1/experiments and /v1/experiments/{name} every two seconds and renders
// them; changes weights with PUT /v1/experiments/{name}/weights and the admin key typed in the form.
"use strict";

const REFRESH_MS = 2000;
const COLOURS = ["#2f6fde", "#e0661b", "#1b9e5a", "#9b3fc4", "#c43f5b", "#6b7a8f"];
const QUANTILES = ["p50", "p95", "p99"];
const STAGES = ["preprocess", "cache", "queue", "inference", "review", "postprocess"];
const charts = {};
const pinned = new URLSearchParams(location.search).get("experiment"); // ?experiment=NAME
let experimentName = pinned;
let shownWeightsVersion = null;

const $ = (id) => document.getElementById(id);

/** Milliseconds with the precision a reader needs: 2 decimals below 10, 1 below 100, none above. */
function ms(value) {
  if (value === null || value === undefined) return "–";
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return value.toFixed(0);
}

function ratio(value) {
  return value === null || value === undefined ? "–" : value.toFixed(2);
}

function percent(value) {
  return value === null || value === undefined ? "–" : (100 * value).toFixed(2) + "%";
}

/** A table cell with a value and, under it, its 95% interval. */
function withInterval(field, estimate, format) {
  const interval = estimate && estimate.ci ? `[${format(estimate.ci[0])} – ${format(estimate.ci[1])}]` : "";
  return el(
    "td",
    { class: "num", "data-field": field },
    el("span", { class: "value" }, format(estimate ? estimate.value : null)),
    el("span", { class: "ci" }, interval),
  );
}

function colourOf(report, arm) {
  const index = report.arms.findIndex((a) => a.name === arm);
  return COLOURS[index % COLOURS.length];
}

function replaceRows(table, rows) {
  table.querySelector("tbody").replaceChildren(...rows);
}

async function getJSON(url) {
  // With API keys configured, reading needs a key too: the admin key, once typed in, is one.
  const key = $("admin-key").value;
  const headers = key ? { authorization: `Bearer ${key}` } : {};
  const response = await fetch(url, { cache: "no-store", headers });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

function renderHeader(report) {
  $("title").textContent = report.name;
  $("description").textContent = report.description || "";
  const started = new Date(report.started_at * 1000).toLocaleString();
  $("summary").textContent = `${report.status}, since ${started} · weights version ${report.version}`;
  $("scope").textContent =
    report.scope === "cluster"
      ? `Merged over ${report.replicas.reporting} replica(s) reporting (${report.replicas.live} live), through Redis.`
      : "Numbers from this replica only: with several replicas, start them with --redis to merge their numbers.";
  $("scope").dataset.scope = report.scope;
}

function renderSampleRatio(report) {
  const srm = report.sample_ratio;
  const box = $("srm");
  box.dataset.mismatch = String(srm.mismatch);
  if (srm.mismatch) {
    box.className = "warning";
    const observed = Object.entries(srm.observed).map(([arm, n]) => `${arm} ${n}`).join(", ");
    const expected = Object.entries(srm.expected_share).map(([arm, s]) => `${arm} ${percent(s)}`).join(", ");
    box.textContent =
      `Sample ratio mismatch: assigned ${observed}, but the weights ask for ${expected} ` +
      `(chi-square p = ${srm.p_value.toExponential(2)} < ${srm.alpha}). The assignment or the traffic is skewed: ` +
      "do not trust the comparison until it is explained.";
  } else {
    box.className = "note";
    box.textContent =
      srm.p_value === null
        ? "Sample ratio check: not enough assigned requests yet."
        : `Sample ratio check passes: assignment matches the weights (chi-square p = ${srm.p_value.toFixed(3)}).`;
  }
}

function renderArms(report) {
  replaceRows(
    $("arms"),
    report.arms.map((arm) =>
      el(
        "tr",
        { "data-arm": arm.name },
        el("td", {}, el("span", { class: "swatch", style: `background:${colourOf(report, arm.name)}` }), arm.name),
        el(
          "td",
          { "data-field": "runs" },
          arm.backend +
            (Object.keys(arm.params).length ? ` ${JSON.stringify(arm.params)}` : "") +
            (arm.model ? ` on ${arm.model}` : ""),
        ),
        el("td", { class: "num", "data-field": "weight" }, `${arm.weight} (${percent(arm.share)})`),
        el("td", { class: "num", "data-field": "assigned" }, arm.assigned),
        el("td", { class: "num", "data-field": "requests" }, arm.requests),
        el("td", { class: "num", "data-field": "errors" }, arm.errors),
        ...QUANTILES.map((q) => withInterval(q, arm.latency_ms[q], ms)),
        el("td", { class: "num", "data-field": "requests_per_s" }, arm.requests_per_s.toFixed(2)),
        el("td", { class: "num", "data-field": "edits_per_sentence" }, ratio(arm.edits_per_sentence)),
      ),
    ),
  );
}

function renderComparison(report) {
  $("control-name").textContent = `(control: ${report.control})`;
  replaceRows(
    $("comparison"),
    report.comparisons.map((c) => {
      const test = c.median_test;
      const verdict =
        test.p_value === null
          ? "not enough data"
          : `p = ${test.p_value.toPrecision(2)}, ${test.significant ? "significant" : "not significant"}`;
      return el(
        "tr",
        { "data-arm": c.arm },
        el("td", {}, c.arm),
        ...QUANTILES.map((q) => withInterval(q, c.speedup[q], ratio)),
        el("td", { "data-field": "median_test" }, verdict),
      );
    }),
  );
}

function renderAcceptance(report) {
  const acceptance = report.acceptance;
  const arms = acceptance ? Object.entries(acceptance.arms) : [];
  const tests = new Map((acceptance ? acceptance.comparisons : []).map((c) => [c.arm, c]));
  replaceRows(
    $("acceptance"),
    arms.map(([name, arm]) => {
      const test = tests.get(name);
      let verdict = "control";
      if (test) {
        verdict =
          test.p_value === null
            ? "not enough feedback"
            : `${test.difference >= 0 ? "+" : ""}${(100 * test.difference).toFixed(1)} points, p = ${test.p_value.toPrecision(2)}, ${test.significant ? "significant" : "not significant"}`;
      }
      const types = Object.entries(arm.by_type)
        .map(([type, counts]) => `${type} ${percent(counts.rate)} (${counts.accepted}/${counts.accepted + counts.dismissed})`)
        .join(", ");
      return el(
        "tr",
        { "data-arm": name },
        el("td", {}, el("span", { class: "swatch", style: `background:${colourOf(report, name)}` }), name),
        el("td", { class: "num", "data-field": "accepted" }, arm.accepted),
        el("td", { class: "num", "data-field": "dismissed" }, arm.dismissed),
        withInterval("rate", { value: arm.rate, ci: arm.ci }, percent),
        el("td", { "data-field": "by_type" }, types || "none yet"),
        el("td", { "data-field": "against_control" }, verdict),
      );
    }),
  );
}

function renderCategories(report) {
  const byArm = report.arms.map((arm) => {
    const counts = {};
    for (const [code, count] of Object.entries(arm.categories || {})) {
      const category = code.split(":").slice(1).join(":");
      counts[category] = (counts[category] || 0) + count;
    }
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    return { name: arm.name, counts, total };
  });
  const categories = [...new Set(byArm.flatMap((arm) => Object.keys(arm.counts)))].sort(
    (a, b) => byArm.reduce((n, arm) => n + (arm.counts[b] || 0), 0) - byArm.reduce((n, arm) => n + (arm.counts[a] || 0), 0),
  );
  $("categories")
    .querySelector("thead tr")
    .replaceChildren(el("th", {}, "category"), ...byArm.map((arm) => el("th", {}, arm.name)));
  replaceRows(
    $("categories"),
    categories.length
      ? categories.map((category) =>
          el(
            "tr",
            { "data-category": category },
            el("td", {}, category),
            ...byArm.map((arm) =>
              el(
                "td",
                { class: "num", "data-arm": arm.name },
                `${arm.counts[category] || 0} (${percent(arm.total ? (arm.counts[category] || 0) / arm.total : null)})`,
              ),
            ),
          ),
        )
      : [el("tr", {}, el("td", { colSpan: 1 + byArm.length, class: "note" }, "no edits yet"))],
  );
}

function renderShadow(report) {
  const shadow = report.shadow;
  $("shadow-plan").textContent = shadow
    ? `(${percent(shadow.sample_rate)} of requests also decoded by ${shadow.arm}, after the answer)`
    : "(no shadow comparison in this experiment)";
  const pairs = shadow ? shadow.pairs : [];
  replaceRows(
    $("agreement"),
    pairs.map((p) => {
      const below = p.expected !== null && p.agreement !== null && p.agreement < p.expected;
      return el(
        "tr",
        { "data-pair": `${p.served}/${p.shadow}` },
        el("td", {}, p.served),
        el("td", {}, p.shadow),
        el("td", { class: "num", "data-field": "compared" }, p.compared),
        el("td", { class: "num", "data-field": "agreed" }, p.agreed),
        el("td", { class: "num " + (below ? "bad" : "good"), "data-field": "agreement" }, percent(p.agreement)),
        el(
          "td",
          { class: "num", "data-field": "expected" },
          p.expected !== null ? percent(p.expected) : p.same_model ? "lossy arm" : "two models",
        ),
      );
    }),
  );
  const recent = shadow ? shadow.disagreements : [];
  replaceRows(
    $("disagreements"),
    recent.length
      ? recent.map((d) =>
          el(
            "tr",
            {},
            el("td", {}, new Date(d.at * 1000).toLocaleTimeString()),
            el("td", {}, d.sentence),
            el("td", {}, el("strong", {}, `${d.served_arm}: `), d.served),
            el("td", {}, el("strong", {}, `${d.shadow_arm}: `), d.shadow),
          ),
        )
      : [el("tr", {}, el("td", { colSpan: 4, class: "note" }, "none"))],
  );
}

function renderStages(report) {
  const stages = STAGES.filter((stage) => report.arms.some((arm) => arm.stages_ms[stage]));
  $("stages").querySelector("thead tr").replaceChildren(el("th", {}, "arm"), ...stages.map((s) => el("th", {}, s)));
  replaceRows(
    $("stages"),
    report.arms.map((arm) =>
      el(
        "tr",
        { "data-arm": arm.name },
        el("td", {}, arm.name),
        ...stages.map((stage) => {
          const summary = arm.stages_ms[stage];
          return el("td", { class: "num", "data-field": stage }, ms(summary ? summary.p50.value : null));
        }),
      ),
    ),
  );
}

/** uPlot wants one x array and a y array per series, aligned: nulls where an arm had no bucket. */
function aligned(report, field) {
  const arms = report.arms.map((arm) => arm.name);
  const times = [...new Set(arms.flatMap((arm) => report.timeline.arms[arm].map((point) => point.t)))];
  times.sort((a, b) => a - b);
  const series = arms.map((arm) => {
    const byTime = new Map(report.timeline.arms[arm].map((point) => [point.t, point[field]]));
    return times.map((t) => (byTime.has(t) ? byTime.get(t) : null));
  });
  return [times, ...series];
}

// The least span of the time axis, in seconds: with one bucket of data uPlot's own range drew two years of axis.
const MIN_TIME_SPAN_S = 60;

/** The time axis for data from `min` to `max` (bucket starts, seconds): half a bucket beyond each end, and at least
 * MIN_TIME_SPAN_S wide, centred on the data, where the data spans less. */
function fitTime(min, max, bucket) {
  if (min == null || max == null) {
    const now = Date.now() / 1000;
    return [now - MIN_TIME_SPAN_S, now];
  }
  const middle = (min + max) / 2;
  const half = Math.max(max - min + bucket, MIN_TIME_SPAN_S) / 2;
  return [middle - half, middle + half];
}

function renderChart(id, report, field, label) {
  const data = aligned(report, field);
  const key = `${report.name}:${report.arms.map((a) => a.name).join(",")}`;
  const existing = charts[id];
  if (existing && existing.key === key) {
    existing.plot.setData(data);
    return;
  }
  if (existing) existing.plot.destroy();
  const container = $(id);
  const options = {
    width: Math.max(300, container.clientWidth || 520),
    height: 200,
    series: [
      {},
      ...report.arms.map((arm) => ({ label: arm.name, stroke: colourOf(report, arm.name), width: 2, spanGaps: true })),
    ],
    // from the data itself: with one point uPlot hands the range a max a thousand days past the min
    scales: { x: { time: true, range: (u) => fitTime(u.data[0][0], u.data[0].at(-1), report.timeline.bucket_s || 5) } },
    axes: [{}, { label, size: 60 }],
  };
  charts[id] = { key, plot: new uPlot(options, data, container) };
}

function renderWeightsForm(report) {
  if (shownWeightsVersion === report.version) return; // keep what the reader is typing
  shownWeightsVersion = report.version;
  $("weight-inputs").replaceChildren(
    ...report.arms.map((arm) =>
      el(
        "label",
        {},
        `${arm.name} `,
        el("input", { type: "number", min: "0", step: "any", name: arm.name, value: String(arm.weight) }),
      ),
    ),
  );
}

async function changeWeights(event) {
  event.preventDefault();
  const weights = {};
  for (const input of $("weight-inputs").querySelectorAll("input")) weights[input.name] = Number(input.value);
  const result = $("weights-result");
  const response = await fetch(`/v1/experiments/${encodeURIComponent(experimentName)}/weights`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${$("admin-key").value}` },
    body: JSON.stringify({ weights }),
  });
  const body = await response.json();
  result.dataset.status = String(response.status);
  if (response.ok) {
    result.className = "good";
    result.textContent = `Weights are now ${Object.entries(body.weights).map(([a, w]) => `${a} ${w}`).join(", ")}.`;
    shownWeightsVersion = null;
    await refresh();
  } else {
    result.className = "bad";
    result.textContent = `Refused (${response.status}): ${body.error.message}`;
  }
}

async function refresh() {
  try {
    const overview = await getJSON("/v1/experiments");
    experimentName = pinned || (overview.experiment && overview.experiment.name);
    $("default-backend").textContent = overview.default_backend;
    if (!experimentName) {
      $("none").hidden = false;
      $("experiment").hidden = true;
    } else {
      const report = await getJSON(`/v1/experiments/${encodeURIComponent(experimentName)}`);
      $("none").hidden = true;
      $("experiment").hidden = false;
      renderHeader(report);
      renderSampleRatio(report);
      renderArms(report);
      renderComparison(report);
      renderAcceptance(report);
      renderCategories(report);
      renderShadow(report);
      renderStages(report);
      for (const q of QUANTILES) renderChart(`chart-${q}`, report, q, "ms");
      renderChart("chart-throughput", report, "requests_per_s", "req/s");
      renderWeightsForm(report);
    }
    $("load-error").hidden = true;
    $("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  } catch (error) {
    $("load-error").hidden = false;
    $("load-error").textContent = `Could not read the experiment: ${error.message}`;
  }
}

$("weights-form").addEventListener("submit", changeWeights);
refresh();
setInterval(refresh, REFRESH_MS);
