// The device engine's confidence and policy: service/text/device_confidence.py, in JavaScript (a test runs both on
// the dev sets and generated text and finds them equal).
//
// Each edit the model makes of a sentence gets the evidence the device can compute: the model's lowest
// log-probability at the edit (confidence.py's TokenScores.lowest), the sentence's words (SentenceEvidence, with the
// frequencies of the word list /device/model.json names), how common the words it changes are, and a coarse lexical
// class read from its words. The fit the service made of them (models/gec/calibrate.py --device) gives its
// confidence; an edit is shown when that reaches the level's threshold times its class's multiplier, and never when
// it rewrites a word policy.py's fixed_words fixes (a name, CamelCase, a word with a digit or an unknown one: neither
// in the model's vocabulary nor listed, or a listed misspelling, unless the model replaces it by a known word close
// in spelling, as the server's spelling stage would). `words` is {zipfs, dictionary} (deviceWords).
// `policy` is the JSON device_confidence.policy_file writes: the fit, the levels, the multipliers and the words.

import { diffEdits } from "./edits.mjs";

const WORDS = /[A-Za-z]+/g; // confidence.WORD_PATTERN
const LEXICAL = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu; // device_confidence.LEXICAL_PATTERN
const FIXED = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu; // policy.py's _WORD
const INITIAL = /^[^\p{L}\p{N}]*/u; // policy.py's _INITIAL
const SUFFIXES = ["s", "es", "ed", "ing", "er", "est", "ly"];
const Y_SUFFIXES = ["ies", "ied", "ier", "iest", "ily"];

/** The word list's lines ("tenths word word ...", device_confidence.words_file) -> Map word -> Zipf frequency. */
export function parseWords(text) {
  const zipfs = new Map();
  for (const line of text.split("\n")) {
    if (!line) continue;
    const [tenths, ...words] = line.split(" ");
    const zipf = Number(tenths) / 10;
    for (const word of words) zipfs.set(word, zipf);
  }
  return zipfs;
}

/** The device's words (device_confidence.DeviceWords): `zipfs` from parseWords, the dictionary from the text of the
 * model's vocabulary file ("word count" lines). */
export function deviceWords(zipfs, vocabulary = "") {
  const dictionary = new Set();
  for (const line of vocabulary.split("\n")) {
    const word = line.split(" ")[0];
    if (word) dictionary.add(word.toLowerCase());
  }
  return { zipfs, dictionary };
}

/** device_confidence.one_edit: the strings of lowercase ASCII letters one edit from `word`. */
function oneEdit(word) {
  const letters = "abcdefghijklmnopqrstuvwxyz";
  const found = new Set();
  for (let k = 0; k <= word.length; k++) {
    const a = word.slice(0, k);
    const b = word.slice(k);
    if (b) found.add(a + b.slice(1));
    if (b.length > 1) found.add(a + b[1] + b[0] + b.slice(2));
    for (const letter of letters) {
      if (b) found.add(a + letter + b.slice(1));
      found.add(a + letter + b);
    }
  }
  found.delete(word);
  return found;
}

/** DeviceWords.known: in the dictionary, or listed and no dictionary word one edit away far more common. */
export function known(words, word, policy) {
  const lower = word.toLowerCase();
  if (words.dictionary.has(lower)) return true;
  const frequency = zipfOf(words, lower);
  if (frequency <= 0) return false;
  for (const other of oneEdit(lower)) {
    if (words.dictionary.has(other) && zipfOf(words, other) >= frequency + policy.misspelling_zipf_gap) return false;
  }
  return true;
}

/** The bytes of a gzip file, decompressed and read as text (the worker's word list). */
export async function gunzipText(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}

/** The policy, read for use: its word sets as sets, each confusion-set word's group. */
export function readPolicy(data) {
  const confusable = new Map();
  for (const group of data.confusion_sets) for (const word of group) confusable.set(word, new Set(group));
  return {
    ...data,
    functionWords: new Set(data.function_words),
    pronounI: new Set(data.pronoun_i),
    irregular: new Map(Object.entries(data.irregular)),
    confusable,
  };
}

function zipfOf(words, word) {
  return words.zipfs.get(word.toLowerCase()) ?? 0;
}

/** The lowest log-probability of the tokens overlapping [start, end) of the output and of the one after it
 * (TokenScores.lowest; `ends`: where each token ends in the output). */
export function lowest(ends, logprobs, start, end, floor) {
  if (!logprobs.length) return 0;
  const bisectRight = (x) => {
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid] <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const bisectLeft = (x) => {
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const first = Math.min(bisectRight(start), logprobs.length - 1);
  const last = Math.min(Math.max(first, bisectLeft(end)) + 1, logprobs.length - 1);
  return Math.max(floor, Math.min(...logprobs.slice(first, last + 1)));
}

/** Where each of `ids` ends in `decode(ids)` (tokenization.py's decode_with_ends, in UTF-16 code units). */
export function tokenEnds(decode, ids) {
  const text = decode(ids);
  const pieces = ids.map((id) => decode([id]));
  if (pieces.reduce((sum, piece) => sum + piece.length, 0) !== text.length) {
    return { text, ends: ids.map((_, k) => decode(ids.slice(0, k + 1)).length) };
  }
  let position = 0;
  return { text, ends: pieces.map((piece) => (position += piece.length)) };
}

/** policy.py's fixed_words: the [start, end) spans of the words of `text` the model may not rewrite (`spelled`: the
 * spans of spelling candidates, whose unknown words are free). */
export function fixedWords(text, known, policy, spelled = []) {
  const first = text.match(INITIAL)[0].length;
  const found = [];
  for (const match of text.matchAll(FIXED)) {
    const word = match[0];
    const letters = [...word.replace(/['’]/g, "")];
    const fixed =
      /\p{Nd}/u.test(word) ||
      (/\p{Lu}/u.test(letters[0]) && match.index > first && !policy.pronounI.has(letters.join(""))) ||
      letters.slice(1).some((char) => /\p{Lu}/u.test(char)) ||
      (/^[A-Za-z]{3,}$/.test(letters.join("")) &&
        !known(letters.join("").toLowerCase()) &&
        !spelled.some(([a, b]) => a < match.index + word.length && b > match.index));
    if (fixed) found.push([match.index, match.index + word.length]);
  }
  return found;
}

/** policy.py's rewrites_fixed: whether the edit of [start, end) changes a `fixed` word other than in letter case. */
export function rewritesFixed(start, end, original, replacement, fixed) {
  if (original.toLowerCase() === replacement.toLowerCase()) return false;
  return fixed.some(([a, b]) => (start < end ? start < b && end > a : a < start && start < b));
}

function lexicalWords(text) {
  return (text.match(LEXICAL) || []).map((word) => word.toLowerCase().replaceAll("’", "'"));
}

function functionWord(word, policy) {
  const head = word.split("'")[0];
  return policy.functionWords.has(word) || policy.functionWords.has(head) || (head.endsWith("n") && policy.functionWords.has(head.slice(0, -1)));
}

function analyses(word, policy) {
  const found = [[word, ""]];
  if (policy.irregular.has(word)) found.push([policy.irregular.get(word), "=" + word]);
  for (const suffix of [...SUFFIXES, ...Y_SUFFIXES]) {
    const stem = word.slice(0, -suffix.length);
    if (!word.endsWith(suffix) || stem.length < 2) continue;
    if (Y_SUFFIXES.includes(suffix)) {
      found.push([stem + "y", suffix]);
      continue;
    }
    found.push([stem, suffix], [stem + "e", suffix]);
    if (stem.length >= 3 && stem.at(-1) === stem.at(-2) && !"aeiousl".includes(stem.at(-1))) found.push([stem.slice(0, -1), suffix]);
  }
  const byStem = new Map();
  for (const [stem, ending] of found) {
    if (!byStem.has(stem)) byStem.set(stem, new Set());
    byStem.get(stem).add(ending);
  }
  return byStem;
}

/** classify.py's same_word_forms: two inflections of one word, through different endings. */
export function sameWordForms(a, b, policy) {
  if (a === b) return true;
  const endingsB = analyses(b, policy);
  for (const [stem, endings] of analyses(a, policy)) {
    if (endingsB.has(stem) && ![...endings].some((ending) => endingsB.get(stem).has(ending))) return true;
  }
  return false;
}

/** classify.py's osa_distance, over code points. */
export function osaDistance(a, b) {
  const x = [...a];
  const y = [...b];
  let previous2 = [];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i, ...new Array(y.length).fill(0)];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) current[j] = Math.min(current[j], previous2[j - 2] + 1);
    }
    previous2 = previous;
    previous = current;
  }
  return previous[y.length];
}

/** classify.py's is_spelling_variant: two different words close enough in spelling to be a misspelling of one. */
function spellingVariant(a, b) {
  const longest = Math.max([...a].length, [...b].length);
  const distance = osaDistance(a, b);
  return distance > 0 && distance <= (longest <= 4 ? 1 : longest <= 8 ? 2 : 3) && distance <= 0.4 * longest;
}

/** policy.py's related (of two lowercase words): a spelling neighbour, or in one confusion set. */
function related(a, b, policy) {
  return Boolean(policy.confusable.get(a)?.has(b)) || spellingVariant(a, b);
}

/** device_confidence.lexical_class: the class of replacing `original` by `replacement`, from their words. */
export function lexicalClass(original, replacement, policy) {
  const old = lexicalWords(original);
  const fresh = lexicalWords(replacement);
  const same = (a, b) => a.length === b.length && a.every((word, k) => word === b[k]);
  if (same(old, fresh)) return "punctuation";
  if (old.length >= 2 && same([...old].sort(), [...fresh].sort())) return "order";
  const oldContent = old.filter((word) => !functionWord(word, policy));
  const newContent = fresh.filter((word) => !functionWord(word, policy));
  if (same(oldContent, newContent)) return "closed";
  if (!oldContent.length) return "inserted";
  if (!newContent.length) return "deleted";
  if (oldContent.length !== newContent.length) return "replaced";
  const pairs = oldContent.map((word, k) => [word, newContent[k]]);
  if (pairs.every(([a, b]) => sameWordForms(a, b, policy))) return "morphology";
  if (pairs.every(([a, b]) => sameWordForms(a, b, policy) || related(a, b, policy))) return "related";
  return "replaced";
}

/** device_confidence.spelling_candidate: one unknown word replaced by a known one close in spelling. */
export function spellingCandidate(original, replacement, words, policy) {
  if (!/^[A-Za-z]+$/.test(original) || !/^[A-Za-z]+$/.test(replacement)) return false;
  const close = spellingVariant(original.toLowerCase(), replacement.toLowerCase());
  return close && !known(words, original, policy) && known(words, replacement, policy);
}

/** confidence.SentenceEvidence.of with the list's frequencies, in FEATURES' order. */
export function sentenceEvidence(text, edits, words, policy) {
  const found = text.match(WORDS) || [];
  const logEdits = Math.log(Math.max(1, edits));
  if (!found.length) return [0, 0, 0, 0, 0, logEdits];
  const frequencies = found.map((word) => zipfOf(words, word));
  const capitals = found.slice(1).filter((word) => /^[A-Z]/.test(word)).length;
  const sum = (values) => values.reduce((total, value) => total + value, 0);
  return [
    frequencies.filter((f) => f < policy.rare_zipf).length / found.length,
    frequencies.filter((f) => f === 0).length / found.length,
    sum(frequencies) / found.length,
    Math.log(1 + found.length),
    capitals / Math.max(1, found.length - 1),
    logEdits,
  ];
}

/**
 * device_confidence.sentence_edits: the edits of the model's output `scores` ({text, ends, logprobs}) of the
 * sentence `source` (offsets in it), each with its lexical class, whether it rewrites a fixed word, and its
 * feature row.
 */
export function sentenceEdits(source, scores, words, policy) {
  const edits = diffEdits(source, scores.text, 0);
  const sentence = sentenceEvidence(source, edits.length, words, policy);
  const spelled = edits
    .filter((edit) => spellingCandidate(edit.original, edit.replacement, words, policy))
    .map((edit) => [edit.offset, edit.offset + edit.length]);
  const fixed = fixedWords(source, (word) => known(words, word, policy), policy, spelled);
  let shift = 0;
  return edits.map((edit) => {
    const position = edit.offset + shift;
    shift += edit.replacement.length - edit.length;
    const lexical = lexicalClass(edit.original, edit.replacement, policy);
    const frequencies = (edit.original.match(WORDS) || []).map((word) => zipfOf(words, word));
    const known = frequencies.length && Math.min(...frequencies) > 0 ? Math.min(...frequencies) : 0;
    const row = [
      1,
      lowest(scores.ends, scores.logprobs, position, position + edit.replacement.length, policy.logprob_floor),
      ...sentence,
      known,
      ...policy.classes.slice(1).map((name) => (lexical === name ? 1 : 0)),
    ];
    const rewrites = rewritesFixed(edit.offset, edit.offset + edit.length, edit.original, edit.replacement, fixed);
    return { edit, lexical, fixed: rewrites, row };
  });
}

/** DeviceConfidence.confidence: the fit's probability that the edit of `row` is right, rounded to 3 places. */
export function confidence(policy, row) {
  if (!policy.weights.length) return round3(Math.exp(row[1]));
  const z = policy.weights.reduce((sum, weight, k) => sum + weight * row[k], 0);
  return round3(1 / (1 + Math.exp(-Math.max(-30, Math.min(30, z)))));
}

// Python's round(x, 3): the nearest of the binary value (an exact tie, which a probability hardly ever is, goes up)
function round3(x) {
  return Number(x.toFixed(3));
}

/** policy.py's required: the confidence an edit of class `lexical` needs at `threshold` (at most 1). */
export function required(policy, lexical, threshold) {
  return Math.min(1, threshold * policy.multipliers[lexical]);
}
