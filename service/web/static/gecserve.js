// gecserve's JavaScript client: the editor page's, and any other editor's (one <script> tag, no dependencies).
//
//   <script src="https://gec.example/static/gecserve.js"></script>
//   await window.gecserve.ready;
//   const answer = await window.gecserve.correct("i saw a apple", {engine: "server", spelling: true});
//   // answer: /v1/correct's answer, offsets in UTF-16 code units (they index JavaScript strings):
//   // {text, edits: [{id, offset, length, original, replacement, category, message, ...}], engine: "server", ...}
//
// An engine is an object {name, available, reason, ready: Promise, correct(text, options) -> Promise<answer>}
// registered with window.gecserve.registerEngine(engine). Three come with it: "server" (POST /v1/correct),
// "device" (the model in the browser, in a Web Worker: static/device/; the page must come from the service's
// origin, as a Worker's script must) and "auto" (the device once loaded, else the server). Options both models read:
// `level` ("safe", "default", "picky") and `minConfidence` (/v1/correct's min_confidence): edits under it, times
// their class's multiplier, are neither returned nor applied.
"use strict";

(function () {
  const script = document.currentScript;
  const AUTO_BUDGET_MS = 300;
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
      if (options.level) body.options.level = options.level;
      if (options.minConfidence != null) body.options.min_confidence = options.minConfidence;
      const answer = await post("/v1/correct", body, options.signal);
      return { ...answer, engine: "server" };
    },
  };

  /**
   * The model in the browser: static/device/worker.js runs the service's int8 graphs in onnxruntime-web's wasm
   * backend. Loading it (the first correct(), or load()) downloads the model once (the browser caches it); after
   * that nothing leaves the device. Its answers have no spelling stage and no language-model review, and coarser
   * categories; its edit ids ("device-N") are never sent as feedback. If it cannot load, it becomes unavailable
   * with the reason and refuses (GecserveError "engine_unavailable").
   */
  function deviceEngine() {
    let worker = null;
    let loading = null;
    let next = 0;
    const waiting = new Map(); // message id -> {resolve, reject}
    const engine = {
      name: "device",
      available: typeof Worker === "function" && typeof WebAssembly === "object",
      reason: typeof Worker === "function" && typeof WebAssembly === "object" ? null : "this browser has no Web Workers or WebAssembly",
      ready: Promise.resolve(),
      info: null, // once loaded: {name, version, maxTextChars, licence, bytes, transferred, seconds}
      load() {
        if (!engine.available) return Promise.reject(refusal());
        if (!loading) {
          loading = new Promise((resolve, reject) => {
            const failed = (message) => {
              engine.available = false;
              engine.reason = `the model could not be loaded: ${message}`;
              for (const pending of waiting.values()) pending.reject(refusal());
              waiting.clear();
              if (worker) worker.terminate();
              reject(refusal());
            };
            worker = new Worker(`${settings.baseUrl}/static/device/worker.js`, { type: "module" });
            worker.onerror = (event) => failed(event.message || "the device engine's worker did not start");
            worker.onmessage = ({ data }) => {
              const pending = waiting.get(data.id);
              if (data.type === "ready") {
                engine.info = data.info;
                resolve(data.info);
              } else if (pending) {
                waiting.delete(data.id);
                if (data.type === "result") pending.resolve(data.answer);
                else pending.reject(new GecserveError(0, "device_error", data.message));
              } else if (data.type === "error") failed(data.message);
            };
            worker.postMessage({ type: "load", baseUrl: settings.baseUrl, apiKey: settings.apiKey });
          });
        }
        return loading;
      },
      async correct(text, options = {}) {
        await engine.load();
        const length = [...text].length;
        if (length > engine.info.maxTextChars) {
          throw new GecserveError(413, "too_large", `the text of ${length} characters is over the limit of ${engine.info.maxTextChars}`);
        }
        const id = next++;
        const answer = await new Promise((resolve, reject) => {
          waiting.set(id, { resolve, reject });
          worker.postMessage({ type: "correct", id, text, keepBias: options.keepBias, level: options.level, minConfidence: options.minConfidence });
        });
        return { ...answer, engine: "device" };
      },
    };
    const refusal = () => new GecserveError(0, "engine_unavailable", `the device engine is not available: ${engine.reason}`);
    return engine;
  }

  /**
   * The device engine once it has loaded (its load starts with the first check), the server until then, when it
   * cannot load, for a text the device has not answered within `options.budgetMs` (default 300 ms) per sentence,
   * and for a text with a sentence the device left as written because it is not plain prose (a URL, markdown,
   * code, another script: the server reads those with its protected spans). The answer's `engine` says which
   * answered.
   */
  function autoEngine(device, server) {
    return {
      name: "auto",
      available: true,
      reason: null,
      ready: Promise.resolve(),
      async correct(text, options = {}) {
        if (device.available) device.load().catch(() => {}); // a failure makes it unavailable: the server answers
        if (!device.available || !device.info) return server.correct(text, options);
        const count = [...new Intl.Segmenter("en", { granularity: "sentence" }).segment(text)].length;
        const budget = (options.budgetMs ?? AUTO_BUDGET_MS) * Math.max(1, count);
        let timer = null;
        const late = new Promise((resolve) => {
          timer = setTimeout(() => resolve(null), budget);
        });
        const answer = await Promise.race([device.correct(text, options).catch(() => null), late]);
        clearTimeout(timer);
        const readAll = answer && !answer.sentences.some((sentence) => sentence.dropped === "protected");
        return readAll ? answer : server.correct(text, options);
      },
    };
  }

  const engines = new Map();

  function registerEngine(engine) {
    if (!engine || typeof engine.name !== "string" || typeof engine.correct !== "function") {
      throw new TypeError("an engine needs a name and a correct(text, options) method");
    }
    if (!("available" in engine)) engine.available = true;
    if (!("reason" in engine)) engine.reason = null;
    if (!("ready" in engine)) engine.ready = Promise.resolve();
    engines.set(engine.name, engine);
    return engine;
  }

  const device = registerEngine(deviceEngine());
  registerEngine(serverEngine);
  registerEngine(autoEngine(device, serverEngine));

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

  /** What the writer did with suggestions: POST /v1/feedback with the edits' ids (the device engine's stay here). */
  async function feedback(editIds, action) {
    const sent = editIds.filter((id) => !String(id).startsWith("device-"));
    return sent.length ? post("/v1/feedback", { edit_ids: sent, action }) : { counted: 0, on_device: editIds.length };
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
