// The editor page (GET /editor): a textarea over a backdrop that mirrors its text with suggestions underlined.
// Paragraphs (lines) are checked through window.gecserve (gecserve.js) 300 ms after the last keystroke; only
// paragraphs whose text has no answer yet are sent (answers are cached by paragraph text), and an answer that
// comes back for a paragraph text no longer in the editor is discarded. Offsets are UTF-16 code units, so they
// index the textarea's value directly. A click on an underline (or Tab, to the next one) opens its card, which names
// the category as a writer would (labels.js) and, where the answer has it, how sure the model is: Accept (Enter)
// applies the replacement, Dismiss (Escape) hides it, "Accept all" applies a paragraph's suggestions at once; each is
// sent to POST /v1/feedback with the edits' ids.
"use strict";

const DEBOUNCE_MS = 300;
const MAX_PARALLEL = 4;
const CACHE_LIMIT = 2000;
// why the device engine left a sentence as written (its answer's sentences[].dropped), as the writer reads it; the
// guard's reasons (a looping or unrelated output) are the model's failures, not the writer's to act on
const LEFT_REASONS = { protected: "not plain prose", language: "another language", too_long: "too long" };

const $ = (id) => document.getElementById(id);
const editor = $("editor");
const backdrop = $("backdrop");
const card = $("card");

const state = {
  engine: new URLSearchParams(location.search).get("engine") || "server",
  spelling: true,
  cache: new Map(), // paragraph text -> {status: "ok", answer, engine} | {status: "error", error, retry}
  inflight: new Set(), // paragraph texts being checked
  queue: [], // paragraph texts waiting for a free request slot
  running: 0,
  timer: null,
  version: 0, // bumped when the engine or its options change: answers asked for under another are dropped
  dismissed: new Set(), // edit ids
  shown: [], // the underlines drawn: {start, end, edit, paragraph, id}
  open: null, // the underline whose card is open
  requests: 0,
  discarded: 0,
};

/** The editor's paragraphs (its lines), each with where it starts in the textarea's value. */
function paragraphs(value = editor.value) {
  const found = [];
  let start = 0;
  for (const text of value.split("\n")) {
    found.push({ text, start });
    start += text.length + 1;
  }
  return found;
}

function wanted(text) {
  return text.trim() !== "";
}

function remember(text, entry) {
  state.cache.delete(text);
  state.cache.set(text, entry);
  while (state.cache.size > CACHE_LIMIT) state.cache.delete(state.cache.keys().next().value);
}

/** The colour group of an edit's category: a missing or an unneeded word (punctuation aside) has one of its own,
 * as its card's name says; otherwise the part after the operation (R:VERB:SVA is VERB). */
function group(category) {
  const parts = String(category || "OTHER").split(":");
  if (parts.length < 2) return parts[0];
  if (parts[1] !== "PUNCT" && parts[0] === "M") return "MISSING";
  if (parts[1] !== "PUNCT" && parts[0] === "U") return "UNNEEDED";
  return parts[1];
}

function engineAvailable() {
  try {
    return window.gecserve.engine(state.engine).available;
  } catch (error) {
    return false;
  }
}

// ---- checking ----

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(() => {
    state.timer = null;
    check();
  }, DEBOUNCE_MS);
  showStatus();
}

function check() {
  if (!engineAvailable()) {
    showStatus();
    return;
  }
  for (const { text } of paragraphs()) {
    if (!wanted(text) || state.inflight.has(text) || state.queue.includes(text)) continue;
    const entry = state.cache.get(text);
    if (entry && !(entry.status === "error" && entry.retry)) continue;
    state.queue.push(text);
  }
  pump();
  showStatus();
}

function pump() {
  while (state.running < MAX_PARALLEL && state.queue.length) {
    const text = state.queue.shift();
    if (!current().has(text)) continue; // changed while it waited: never sent
    request(text);
  }
}

function current() {
  return new Set(paragraphs().map((p) => p.text));
}

async function request(text) {
  const version = state.version;
  state.running += 1;
  state.requests += 1;
  state.inflight.add(text);
  showStatus();
  let entry;
  try {
    const answer = await window.gecserve.correct(text, { engine: state.engine, spelling: state.spelling });
    entry = { status: "ok", answer, engine: answer.engine || state.engine };
  } catch (error) {
    const status = error.status || 0;
    entry = {
      status: "error",
      error: { status, reason: error.reason || "error", message: error.message || String(error) },
      retry: status === 0 || status === 429 || status >= 500,
    };
  } finally {
    state.running -= 1;
    state.inflight.delete(text);
  }
  describeEngine(); // the device engine may have loaded, or failed to, with this check
  if (version !== state.version || !current().has(text)) {
    state.discarded += 1; // the text (or the engine) changed since it was asked: this answer is for nothing shown
  } else {
    remember(text, entry);
  }
  pump();
  render();
}

// ---- drawing ----

/** The edits of a paragraph's answer to underline: not dismissed, in range, not overlapping, in order. */
function editsOf(text, entry) {
  if (!entry || entry.status !== "ok" || !Array.isArray(entry.answer.edits)) return [];
  const edits = entry.answer.edits
    .filter((e) => !state.dismissed.has(e.id))
    .filter((e) => e.offset >= 0 && e.length >= 0 && e.offset + e.length <= text.length)
    .filter((e) => e.original === undefined || text.slice(e.offset, e.offset + e.length) === e.original)
    .sort((a, b) => a.offset - b.offset || a.length - b.length);
  const kept = [];
  let end = -1;
  for (const edit of edits) {
    if (edit.offset < end || (edit.offset === end && edit.length === 0 && kept.length && kept.at(-1).length === 0)) continue;
    kept.push(edit);
    end = edit.offset + edit.length;
  }
  return kept;
}

function render() {
  const parts = paragraphs();
  const fragment = document.createDocumentFragment();
  const rows = [];
  const groups = new Map();
  state.shown = [];
  parts.forEach(({ text, start }, index) => {
    if (index > 0) fragment.append("\n");
    const entry = state.cache.get(text);
    let at = 0;
    for (const edit of editsOf(text, entry)) {
      fragment.append(text.slice(at, edit.offset));
      const name = group(edit.category);
      const label = categoryLabel(edit.category, edit.type);
      const mark = el(
        "mark",
        {
          class: edit.length === 0 ? "insert" : edit.replacement === "" ? "delete" : "",
          "data-edit-id": edit.id,
          "data-category": edit.category || "",
          "data-group": name,
          "data-replacement": edit.replacement,
          "data-paragraph": index,
          "data-start": start + edit.offset,
          "data-end": start + edit.offset + edit.length,
          "data-label": label,
        },
        text.slice(edit.offset, edit.offset + edit.length),
      );
      fragment.append(mark);
      state.shown.push({ start: start + edit.offset, end: start + edit.offset + edit.length, edit, paragraph: index });
      const counted = groups.get(label) || { name, count: 0 };
      groups.set(label, { name, count: counted.count + 1 });
      at = edit.offset + edit.length;
    }
    fragment.append(text.slice(at));
    rows.push(paragraphRow(index, text, entry));
  });
  fragment.append("\u200b"); // keeps a trailing empty line as tall as the textarea's
  backdrop.replaceChildren(fragment);
  backdrop.scrollTop = editor.scrollTop;
  $("paragraphs").replaceChildren(...rows);
  $("legend").replaceChildren(
    ...[...groups.entries()]
      .sort()
      .map(([label, { name, count }]) =>
        el("li", { "data-group": name, "data-label": label }, el("span", { class: "swatch" }), `${label}: ${count}`),
      ),
  );
  if (state.open && !state.shown.some((s) => s.edit.id === state.open.edit.id)) closeCard();
  else if (state.open) highlight(state.open.edit.id);
  showStatus();
}

/** The reasons an answer gives for the sentences its engine left as written, one per such sentence. */
function leftAsWritten(answer) {
  return (answer.sentences || []).map((sentence) => LEFT_REASONS[sentence.dropped]).filter(Boolean);
}

function paragraphRow(index, text, entry) {
  const chars = `${text.length} char${text.length === 1 ? "" : "s"}`;
  if (!wanted(text)) return el("li", { "data-paragraph": index, "data-status": "empty" }, "empty");
  if (entry && entry.status === "ok") {
    const count = editsOf(text, entry).length;
    const left = leftAsWritten(entry.answer);
    const leftNote = left.length
      ? ` · ${left.length} sentence${left.length === 1 ? "" : "s"} left as written (${[...new Set(left)].join(", ")})`
      : "";
    const row = el(
      "li",
      { "data-paragraph": index, "data-status": "ok", "data-engine": entry.engine, "data-edits": count, "data-left": left.length },
      el("span", { class: "engine" }, entry.engine),
      ` · ${count} suggestion${count === 1 ? "" : "s"}${leftNote} · ${chars}`,
    );
    if (count > 0) {
      row.append(" ", el("button", { type: "button", class: "accept-all", onclick: () => acceptAll(index) }, "Accept all"));
    }
    return row;
  }
  if (entry && entry.status === "error") {
    const { status, message } = entry.error;
    const row = el("li", { "data-paragraph": index, "data-status": "error", "data-http-status": status });
    row.textContent = status ? `refused (${status}): ${message}` : message;
    return row;
  }
  if (!engineAvailable()) return el("li", { "data-paragraph": index, "data-status": "unchecked" }, "not checked");
  return el("li", { "data-paragraph": index, "data-status": "pending" }, `checking… · ${chars}`);
}

function showStatus() {
  const busy = state.timer !== null || state.running > 0 || state.queue.length > 0;
  const status = $("status");
  status.dataset.busy = String(busy);
  document.body.dataset.requests = String(state.requests);
  document.body.dataset.discarded = String(state.discarded);
  if (!engineAvailable()) status.textContent = `The ${state.engine} engine is not available: nothing is checked.`;
  else if (busy) status.textContent = `Checking${state.running ? ` ${state.running} paragraph(s)` : ""}…`;
  else status.textContent = `Idle · ${state.shown.length} suggestion(s).`;
}

// ---- the card ----

function highlight(id) {
  for (const mark of backdrop.querySelectorAll("mark.active")) mark.classList.remove("active");
  const mark = backdrop.querySelector(`mark[data-edit-id="${CSS.escape(id)}"]`);
  if (mark) mark.classList.add("active");
  return mark;
}

/** The underline at the caret: one it is inside, else one it touches, else an insertion a character away (an
 * insertion has no width of its own to click on). */
function underlineAt(caret) {
  return (
    state.shown.find((s) => s.start < caret && caret < s.end) ||
    state.shown.find((s) => s.start <= caret && caret <= s.end) ||
    state.shown.find((s) => s.start === s.end && Math.abs(s.start - caret) <= 1) ||
    null
  );
}

function openCard(shown) {
  state.open = shown;
  const { edit } = shown;
  $("card-original").textContent = edit.original || "";
  $("card-original").hidden = !edit.original;
  $("card-replacement").textContent = edit.replacement === "" ? "(remove)" : edit.replacement;
  const category = $("card-category");
  category.textContent = categoryLabel(edit.category, edit.type);
  category.title = edit.category ? `ERRANT category ${edit.category}` : "";
  category.dataset.group = group(edit.category);
  const confidence = confidenceLabel(edit.confidence);
  $("card-confidence").hidden = confidence === null;
  $("card-confidence").textContent = confidence || "";
  $("card-message").textContent = edit.message || "";
  const others = paragraphEdits(shown.paragraph).length;
  $("accept-all").hidden = others < 2;
  $("accept-all").textContent = `Accept all ${others} in this paragraph`;
  card.dataset.editId = edit.id;
  card.dataset.code = edit.category || "";
  card.hidden = false;
  const mark = highlight(edit.id);
  const box = card.parentElement.getBoundingClientRect();
  const rect = mark ? mark.getBoundingClientRect() : editor.getBoundingClientRect();
  const left = Math.max(0, Math.min(rect.left - box.left, box.width - card.offsetWidth));
  card.style.left = `${left}px`;
  card.style.top = `${rect.bottom - box.top + 6}px`;
}

function closeCard() {
  state.open = null;
  card.hidden = true;
  delete card.dataset.editId;
  delete card.dataset.code;
  for (const mark of backdrop.querySelectorAll("mark.active")) mark.classList.remove("active");
}

function onCaret() {
  if (editor.selectionStart !== editor.selectionEnd) return closeCard();
  const shown = underlineAt(editor.selectionStart);
  if (shown) openCard(shown);
  else closeCard();
}

async function sendFeedback(ids, action) {
  const line = $("feedback-status");
  try {
    const report = await window.gecserve.feedback(ids, action);
    line.dataset.status = "200";
    const done = action === "accepted" ? "Accepted" : "Dismissed";
    line.textContent = report.on_device
      ? `${done}: kept on this device (the device engine sends nothing).`
      : `${done}: feedback sent (${report.counted} counted).`;
  } catch (error) {
    line.dataset.status = String(error.status || 0);
    line.textContent = `Feedback not recorded${error.status ? ` (${error.status})` : ""}: ${error.message}`;
  }
}

/** The accepted edit applied: the paragraph's new text keeps the answer's other edits, shifted past it. */
function accept() {
  if (!state.open) return;
  const { edit, paragraph } = state.open;
  const para = paragraphs()[paragraph];
  const entry = state.cache.get(para.text);
  const start = para.start + edit.offset;
  const end = start + edit.length;
  if (editor.value.slice(start, end) !== (edit.original ?? editor.value.slice(start, end))) return closeCard();
  editor.setRangeText(edit.replacement, start, end, "end");
  const delta = edit.replacement.length - edit.length;
  const newText = para.text.slice(0, edit.offset) + edit.replacement + para.text.slice(edit.offset + edit.length);
  if (entry && entry.status === "ok") {
    const edits = [];
    for (const other of entry.answer.edits) {
      if (other.id === edit.id) continue;
      if (other.offset + other.length <= edit.offset && !(other.length === 0 && other.offset === edit.offset)) {
        edits.push(other);
      } else if (other.offset >= edit.offset + edit.length && !(edit.length === 0 && other.offset === edit.offset)) {
        edits.push({ ...other, offset: other.offset + delta });
      }
    }
    remember(newText, { ...entry, answer: { ...entry.answer, edits } });
  }
  closeCard();
  sendFeedback([edit.id], "accepted");
  render();
  schedule();
  editor.focus();
}

function dismiss() {
  if (!state.open) return;
  const { id } = state.open.edit;
  state.dismissed.add(id);
  closeCard();
  sendFeedback([id], "dismissed");
  render();
  editor.focus();
}

/** The suggestions shown in paragraph `index`, in order. */
function paragraphEdits(index) {
  const para = paragraphs()[index];
  return para ? editsOf(para.text, state.cache.get(para.text)) : [];
}

/** Every suggestion shown in paragraph `index` applied at once (the last first, so offsets hold), and accepted. */
function acceptAll(index) {
  const para = paragraphs()[index];
  const edits = paragraphEdits(index);
  if (!para || !edits.length) return;
  const entry = state.cache.get(para.text);
  let text = para.text;
  for (const edit of [...edits].reverse()) {
    text = text.slice(0, edit.offset) + edit.replacement + text.slice(edit.offset + edit.length);
  }
  editor.setRangeText(text, para.start, para.start + para.text.length, "end");
  remember(text, { ...entry, answer: { ...entry.answer, edits: [] } });
  closeCard();
  sendFeedback(edits.map((edit) => edit.id), "accepted");
  render();
  schedule();
  editor.focus();
}

/** The card of the next suggestion after the open one (or the caret), or the previous one; false where none is.
 * `state.shown` is in the text's order. */
function step(backwards) {
  const shown = state.shown;
  const open = state.open ? shown.findIndex((s) => s.edit.id === state.open.edit.id) : -1;
  const caret = editor.selectionStart;
  let next;
  if (open >= 0) next = shown[open + (backwards ? -1 : 1)];
  else if (backwards) next = shown.findLast((s) => s.start < caret);
  else next = shown.find((s) => s.start >= caret);
  if (!next) return false;
  editor.setSelectionRange(next.start, next.start);
  openCard(next);
  return true;
}

/** Tab and Shift+Tab go from suggestion to suggestion (past the last, Tab leaves the text as usual); with a card
 * open, Enter accepts its suggestion and Escape dismisses it. */
function onKey(event) {
  if (event.key === "Tab" && !event.altKey && !event.ctrlKey && !event.metaKey) {
    if (step(event.shiftKey)) event.preventDefault();
    else closeCard();
  } else if (event.key === "Enter" && state.open && !event.shiftKey) {
    event.preventDefault();
    accept();
  } else if (event.key === "Escape" && state.open) {
    event.preventDefault();
    dismiss();
  }
}

// ---- settings ----

function chooseEngine(name) {
  state.engine = name;
  state.version += 1;
  state.cache.clear();
  state.queue = [];
  const select = $("engine");
  if (![...select.options].some((o) => o.value === name)) select.append(el("option", { value: name }, name));
  select.value = name;
  $("spelling-setting").hidden = name === "device"; // the device engine has no spelling stage: nothing to turn off
  describeEngine();
  const url = new URL(location.href);
  url.searchParams.set("engine", name);
  history.replaceState(null, "", url);
  render();
  check();
}

const DEVICE_NOTE =
  "runs the model in this browser (downloaded once, then cached): your text is sent nowhere. It has no spelling " +
  "stage and no language-model review, names fewer categories, and leaves alone sentences that are not plain " +
  "prose (links, code, markdown, other scripts) or read as another language. The model's weights are licensed for " +
  "non-commercial research use only.";

/** The note under the settings: why an engine cannot check, or what the device engine is and is not. */
function describeEngine() {
  const note = $("engine-note");
  let text = "";
  let warning = false;
  try {
    const engine = window.gecserve.engine(state.engine);
    if (!engine.available) {
      text = `The ${state.engine} engine is not available: ${engine.reason}. Nothing is checked and your text is sent nowhere; choose "server".`;
      warning = true;
    } else if (state.engine === "device" || state.engine === "auto") {
      const device = window.gecserve.engine("device");
      const info = device.info;
      const loaded = info ? ` Loaded ${info.name} ${info.version} in ${info.seconds.toFixed(1)} s (${(info.transferred / 1e6).toFixed(1)} MB transferred).` : "";
      text = state.engine === "device" ? `The device engine ${DEVICE_NOTE}${loaded}` :
        `Auto: the server answers until the device engine has loaded, if it cannot, and when it takes over ` +
        `300 ms a sentence or leaves a sentence alone; then the device engine ${DEVICE_NOTE}${device.available ? loaded : ` (It cannot load: ${device.reason}.)`}`;
    }
  } catch (error) {
    text = `${error.message}.`;
    warning = true;
  }
  note.hidden = text === "";
  note.classList.toggle("warning", warning);
  note.textContent = text;
}

async function start() {
  await window.gecserve.ready;
  const saved = sessionStorage.getItem("gecserve-api-key");
  if (saved) {
    $("api-key").value = saved;
    window.gecserve.configure({ apiKey: saved });
  }
  editor.addEventListener("input", () => {
    closeCard();
    render();
    schedule();
  });
  editor.addEventListener("scroll", () => {
    backdrop.scrollTop = editor.scrollTop;
  });
  editor.addEventListener("click", onCaret);
  editor.addEventListener("keyup", (event) => {
    if (event.key.startsWith("Arrow") || event.key === "Home" || event.key === "End") onCaret();
  });
  editor.addEventListener("keydown", onKey);
  $("accept").addEventListener("click", accept);
  $("dismiss").addEventListener("click", dismiss);
  $("accept-all").addEventListener("click", () => state.open && acceptAll(state.open.paragraph));
  $("engine").addEventListener("change", (event) => chooseEngine(event.target.value));
  $("spelling").addEventListener("change", (event) => {
    state.spelling = event.target.checked;
    chooseEngine(state.engine);
  });
  $("api-key").addEventListener("change", (event) => {
    const key = event.target.value.trim();
    sessionStorage.setItem("gecserve-api-key", key);
    window.gecserve.configure({ apiKey: key });
    for (const [text, entry] of state.cache) if (entry.status === "error") state.cache.delete(text);
    check();
  });
  window.addEventListener("resize", () => state.open && openCard(state.open));
  chooseEngine(state.engine);
  document.body.dataset.loaded = "true";
}

start();
