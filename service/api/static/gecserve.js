// gecserve's JavaScript client: the editor page's, and any other editor's (one <script> tag, no dependencies).
//
//   <script src="https://gec.example/static/gecserve.js"></script>
//   await window.gecserve.ready;
//   const answer = await window.gecserve.correct("i saw a apple", {engine: "server", spelling: true});
//   // answer: /v1/correct's answer, offsets in UTF-16 code units (they index JavaScript strings):
//   // {text, edits: [{id, offset, length, original, replacement, category, message, ...}], engine: "server", ...}
//
// An engine is an object {name, available, reason, ready: Promise, correct(text, options) -> Promise<answer>}
// registered with window.gecserve.registerEngine(engine); "server" (POST /v1/correct) is the one that works
// today. "device" (the model in the browser) and "auto" are registered as not available yet: asking them
// refuses (GecserveError, reason "engine_unavailable") and sends nothing anywhere.
"use strict";

(function () {
  const script = document.currentScript;
  const settings = {
    // The service that served this file, unless the tag says otherwise (data-base-url) or configure() does.
    baseUrl: (script && script.dataset.baseUrl) || (script && script.src ? new URL(script.src).origin : location.origin),
    apiKey: (script && script.dataset.apiKey) || null,
  };

  /** A refusal: `status` (HTTP, 0 when nothing answered), `reason` (the service's error reason), `message`. */
  class GecserveError extends Error {
    constructor(status, reason, message) {
      super(message);
      this.name = "GecserveError";
      this.status = status;
      this.reason = reason;
    }
  }

  function headers() {
    const sent = { "Content-Type": "application/json" };
    if (settings.apiKey) sent.Authorization = `Bearer ${settings.apiKey}`;
    return sent;
  }

  async function post(path, body, signal) {
    let response;
    try {
      response = await fetch(settings.baseUrl + path, { method: "POST", headers: headers(), body: JSON.stringify(body), signal });
    } catch (error) {
      if (error && error.name === "AbortError") throw error;
      throw new GecserveError(0, "unreachable", `the service did not answer: ${error}`);
    }
    let data = null;
    try {
      data = await response.json();
    } catch (error) {
      data = null;
    }
    if (!response.ok) {
      const detail = (data && data.error) || {};
      throw new GecserveError(response.status, detail.reason || "http_error", detail.message || `HTTP ${response.status}`);
    }
    return data;
  }

  /** The service's model: the whole text is sent to POST /v1/correct and answered with UTF-16 offsets. */
  const serverEngine = {
    name: "server",
    available: true,
    reason: null,
    ready: Promise.resolve(),
    async correct(text, options = {}) {
      const body = { text, offset_unit: "utf16", options: { spelling: options.spelling !== false } };
      if (options.client) body.client = options.client;
      const answer = await post("/v1/correct", body, options.signal);
      return { ...answer, engine: "server" };
    },
  };

  function unavailable(name, reason) {
    return {
      name,
      available: false,
      reason,
      ready: Promise.resolve(),
      async correct() {
        throw new GecserveError(0, "engine_unavailable", `the ${name} engine is not available: ${reason}`);
      },
    };
  }

  const engines = new Map();

  function registerEngine(engine) {
    if (!engine || typeof engine.name !== "string" || typeof engine.correct !== "function") {
      throw new TypeError("an engine needs a name and a correct(text, options) method");
    }
    engines.set(engine.name, { available: true, reason: null, ready: Promise.resolve(), ...engine });
    return engine;
  }

  registerEngine(serverEngine);
  registerEngine(unavailable("device", "not available yet (the model in the browser comes later)"));
  registerEngine(unavailable("auto", "not available yet (it will choose between device and server)"));

  function engine(name = "server") {
    const found = engines.get(name);
    if (!found) throw new GecserveError(0, "unknown_engine", `no engine named ${JSON.stringify(name)}`);
    return found;
  }

  /** `text` corrected by `options.engine` (default "server"): the shape of a /v1/correct answer, with `engine`. */
  async function correct(text, options = {}) {
    if (typeof text !== "string") throw new TypeError("correct(text): text must be a string");
    const chosen = engine(options.engine || "server");
    await chosen.ready;
    return chosen.correct(text, options);
  }

  /** What the writer did with suggestions: POST /v1/feedback with the edits' ids. */
  function feedback(editIds, action) {
    return post("/v1/feedback", { edit_ids: editIds, action });
  }

  /** Change where requests go and the API key they present: configure({baseUrl, apiKey}). */
  function configure(changes = {}) {
    if ("baseUrl" in changes) settings.baseUrl = String(changes.baseUrl).replace(/\/+$/, "");
    if ("apiKey" in changes) settings.apiKey = changes.apiKey || null;
    return { baseUrl: settings.baseUrl, apiKey: settings.apiKey ? "(set)" : null };
  }

  /** The engines by name, with whether each is available and why not. */
  function listEngines() {
    return [...engines.values()].map((e) => ({ name: e.name, available: e.available, reason: e.reason }));
  }

  const ready = Promise.all([...engines.values()].map((e) => e.ready)).then(() => listEngines());

  window.gecserve = Object.freeze({
    ready,
    correct,
    feedback,
    configure,
    engines: listEngines,
    engine,
    registerEngine,
    GecserveError,
  });
})();
