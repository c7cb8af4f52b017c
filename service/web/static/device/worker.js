// The device engine's Web Worker: the model in the browser, off the page's thread.
//
// {type: "load", baseUrl, apiKey} reads /device/model.json (service/api/http/device.py), imports onnxruntime-web's wasm
// build and @huggingface/tokenizers from the URLs it names, fetches the int8 graphs, the tokenizer and the vocabulary
// (gzip), the policy and the word list (kept in Cache Storage under URLs that carry their SHA-256) and answers
// {type: "ready", info} or {type: "error"}. {type: "correct", id, text, keepBias, level, minConfidence} splits the
// text into sentences (sentences.mjs), leaves as written those that are not plain prose (protect.mjs: dropped
// "protected") or read as another language (language.mjs: dropped "language"), decodes the others with decode.mjs's
// aggressive decoding, guards and diffs the outputs (edits.mjs), keeps their numbers as written, and applies the
// service's policy (confidence.mjs): no edit rewrites a word the model may not rewrite (a name, CamelCase, a word
// with a digit or one the word list lacks), each edit has its confidence, and one under the level's threshold (or
// minConfidence) times its class's multiplier is neither shown nor applied (counted in its sentence's `held`). It
// answers {type: "result", id, answer: {text, edits, sentences}} with UTF-16 offsets, as /v1/correct does, or
// {type: "error", id, message}.

import { confidence, deviceWords, gunzipText, parseWords, readPolicy, required, sentenceEdits, tokenEnds } from "./confidence.mjs";
import { decodeSentence } from "./decode.mjs";
import { applyEdits, degenerate } from "./edits.mjs";
import { commonWords, foreign } from "./language.mjs";
import { isPlain, leftAlone, numbers, touches, touching } from "./protect.mjs";
import { sentences } from "./sentences.mjs";

const CACHE_NAME = "gecserve-device-model";
let loaded = null; // {model, tokenizer, special, maxContent, keepBias, common, policy, words}
let edited = 0; // edits made so far: each edit's id is unique in this page

async function fetchOk(url, headers) {
  const response = await fetch(url, { headers });
  if (!response.ok) {
    let message = `HTTP ${response.status}`;
    try {
      message = (await response.json()).error.message || message;
    } catch (error) {
      // not the service's error shape: the status says it
    }
    throw new Error(`${url}: ${message}`);
  }
  return response;
}

/**
 * The bytes under `url`, from the worker's Cache Storage when they are there (the URL carries their SHA-256, so they
 * never go stale), else downloaded and stored; entries of other URLs (an earlier model or runtime) are deleted.
 * Where Cache Storage is missing (a page not served over HTTPS or from localhost), the HTTP cache is all there is.
 */
async function cachedBytes(url, headers, keep) {
  if (typeof caches === "undefined") return (await fetchOk(url, headers)).arrayBuffer();
  const cache = await caches.open(CACHE_NAME);
  let response = await cache.match(url);
  if (!response) {
    response = await fetchOk(url, headers);
    await cache.put(url, response.clone());
  }
  for (const request of await cache.keys()) if (!keep.has(request.url)) await cache.delete(request);
  return response.arrayBuffer();
}

async function load({ baseUrl, apiKey }) {
  const started = performance.now();
  const headers = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
  const described = await (await fetchOk(`${baseUrl}/device/model.json`, headers)).json();
  const url = (role) => baseUrl + described.files[role].url;
  const [ort, { Tokenizer }] = await Promise.all([import(url("ort")), import(url("tokenizers"))]);
  ort.env.wasm.numThreads = 1; // threads need a cross-origin-isolated page; one is what the figures are for
  ort.env.wasm.wasmPaths = { wasm: url("wasm") };
  const roles = ["encoder", "decoder", "tokenizer", "vocabulary", "policy", "words"].filter((role) => role in described.files);
  const keep = new Set(roles.map((role) => new URL(url(role), self.location.href).href));
  // Memory over speed where speed does not change: no arena, no memory pattern, no prepacked copies of the weights
  // (bench device: the model's share 57 -> 48 MB, latency within noise, outputs the same).
  const options = {
    executionProviders: ["wasm"],
    graphOptimizationLevel: "all",
    enableCpuMemArena: false,
    enableMemPattern: false,
    extra: { session: { disable_prepacking: "1" } },
  };
  const sessions = {};
  for (const part of ["encoder", "decoder"]) {
    sessions[part] = await ort.InferenceSession.create(new Uint8Array(await cachedBytes(url(part), headers, keep)), options);
  }
  const tokenizerJson = JSON.parse(new TextDecoder().decode(await cachedBytes(url("tokenizer"), headers, keep)));
  // Text that spells a special token ("<s>") is text, as the service's tokenizer reads it (encode_special_tokens).
  tokenizerJson.added_tokens = [];
  // without a vocabulary every sentence reads as English, and no word is known but the list's
  const vocabulary = described.files.vocabulary ? new TextDecoder().decode(await cachedBytes(url("vocabulary"), headers, keep)) : "";
  const common = vocabulary ? commonWords(vocabulary) : new Set();
  const policy = readPolicy(JSON.parse(new TextDecoder().decode(await cachedBytes(url("policy"), headers, keep))));
  const words = deviceWords(parseWords(await gunzipText(await cachedBytes(url("words"), headers, keep))), vocabulary);
  const contract = described.contract;
  loaded = {
    model: {
      contract,
      vocab: contract.vocab_size,
      tensor: (type, data, dims) => new ort.Tensor(type, data, dims),
      run: (name, feeds) => sessions[name].run(feeds),
    },
    tokenizer: new Tokenizer(tokenizerJson, {}),
    special: new Set([contract.pad_token_id, contract.eos_token_id, ...contract.decoder_prefix_ids,
      ...contract.source_prefix_ids, ...contract.source_suffix_ids]),
    maxContent: contract.max_source_positions - contract.source_prefix_ids.length - contract.source_suffix_ids.length,
    keepBias: described.level_keep_bias,
    common,
    policy,
    words,
  };
  const transferred = performance.getEntriesByType("resource").reduce((sum, entry) => sum + (entry.transferSize || 0), 0);
  return {
    name: described.name,
    version: described.version,
    maxTextChars: described.max_text_chars,
    licence: described.licence,
    bytes: Object.values(described.files).reduce((sum, file) => sum + file.bytes, 0),
    transferred,
    seconds: (performance.now() - started) / 1000,
  };
}

/** The answer for `text`, in /v1/correct's shape: the corrected text and its edits (UTF-16 offsets), per sentence. */
async function correct({ text, keepBias, level = "default", minConfidence }) {
  const { model, tokenizer, special, maxContent, common, policy, words } = loaded;
  if (!(level in policy.levels)) throw new Error(`no level ${level}: ${Object.keys(policy.levels).join(", ")}`);
  const bias = keepBias ?? loaded.keepBias[level]; // the server's for the level (model.json's level_keep_bias)
  const threshold = minConfidence ?? policy.levels[level];
  const decode = (ids) => {
    const kept = ids.filter((id) => !special.has(id));
    return kept.length ? tokenizer.decode(kept, { skip_special_tokens: false, clean_up_tokenization_spaces: false }) : "";
  };
  const edits = [];
  const details = [];
  const protectedRuns = leftAlone(text);
  const figures = numbers(text);
  for (const [start, end] of sentences(text)) {
    const source = text.slice(start, end);
    const began = performance.now();
    const left = touching(protectedRuns, start, end) ? "protected" : foreign(source, common) ? "language" : null;
    const detail = { start, end, passes: 0, dropped: left, held: 0 };
    const ids = left ? [] : tokenizer.encode(source, { add_special_tokens: false }).ids;
    if (ids.length > maxContent) detail.dropped = "too_long";
    else if (!left) {
      const decoded = await decodeSentence(model, ids, { keepBias: bias });
      const { text: output, ends } = tokenEnds(decode, decoded.tokens);
      detail.passes = decoded.passes;
      detail.dropped = degenerate(source, output);
      const found = detail.dropped === null ? sentenceEdits(source, { text: output, ends, logprobs: decoded.logprobs }, words, policy) : [];
      for (const { edit, lexical, fixed, row } of found) {
        edit.offset += start;
        if (fixed || !isPlain(edit.replacement) || touches(edit, figures)) continue;
        edit.confidence = confidence(policy, row);
        if (edit.confidence < required(policy, lexical, threshold)) detail.held += 1;
        else edits.push(edit);
      }
    }
    detail.ms = performance.now() - began;
    details.push(detail);
  }
  for (const edit of edits) {
    edit.id = `device-${edited++}`;
    edit.message = "";
  }
  return { text: applyEdits(text, edits), edits, sentences: details };
}

let queue = Promise.resolve(); // one message at a time: a correction never interleaves with another
self.onmessage = ({ data }) => {
  queue = queue.then(async () => {
    try {
      if (data.type === "load") self.postMessage({ type: "ready", info: await load(data) });
      else if (data.type === "correct") self.postMessage({ type: "result", id: data.id, answer: await correct(data) });
    } catch (error) {
      self.postMessage({ type: "error", id: data.id, message: String((error && error.message) || error) });
    }
  });
};
