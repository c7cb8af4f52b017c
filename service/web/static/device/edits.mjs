// The device engine's answer from a sentence and the model's output: the guard, then edits with UTF-16 offsets.
//
// The guard is service/text/guard.py's (a looping, runaway or unrelated output is dropped and the sentence left as
// written), with the overlap rule measured by the longest common subsequence of words where the service uses
// difflib's matching blocks. Edits are the differing runs of a word-level diff (words, single marks, whitespace),
// so applying them to the sentence gives the output exactly. Types are read off the edit alone:
// capitalisation, whitespace, punctuation, else grammar (categories R:ORTH, M/U/R:PUNCT, M/U/R:OTHER); the
// service's finer ones (spelling, word choice, word order, verb forms, from ERRANT's rules) are not ported.

const WORD = /[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu; // guard.py's \w+|[^\w\s]
const PIECE = /\s+|[\p{L}\p{M}\p{N}_]+|[^\p{L}\p{M}\p{N}_\s]/gu;
const REPEAT_EXCESS = 2;
const MAX_NGRAM = 4;
const GROWTH_FACTOR = 2;
const LENGTH_SLACK = 4;
const OVERLAP_MIN_WORDS = 4;
const MIN_OVERLAP = 0.1;

function longestRepeat(words) {
  let best = 1;
  const repeats = (i, at, n) => at + n <= words.length && words.slice(at, at + n).every((word, k) => word === words[i + k]);
  for (let n = 1; n <= MAX_NGRAM; n++) {
    let i = 0;
    while (i <= words.length - 2 * n) {
      let times = 1;
      while (repeats(i, i + times * n, n)) times += 1;
      best = Math.max(best, times);
      i += Math.max(1, (times - 1) * n); // a run found is not counted again from inside it
    }
  }
  return best;
}

/** Pairs [i, j] of a longest common subsequence of `a` and `b`, in order. */
function commonPairs(a, b) {
  const table = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const pairs = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i += 1;
      j += 1;
    } else if (table[i + 1][j] >= table[i][j + 1]) i += 1;
    else j += 1;
  }
  return pairs;
}

/** The guard rule `output` breaks as a correction of `source` ("repetition", "length", "overlap"), or null. */
export function degenerate(source, output) {
  if (output === source) return null;
  const a = source.match(WORD) || [];
  const b = output.match(WORD) || [];
  if (longestRepeat(b) - longestRepeat(a) >= REPEAT_EXCESS) return "repetition";
  if (b.length > GROWTH_FACTOR * a.length + LENGTH_SLACK || b.length < a.length / GROWTH_FACTOR - LENGTH_SLACK) return "length";
  if (a.length >= OVERLAP_MIN_WORDS) {
    const kept = commonPairs(a, b).length;
    if (kept < MIN_OVERLAP * a.length || kept < MIN_OVERLAP * b.length) return "overlap";
  }
  return null;
}

/** The type of replacing `original` by `replacement` (as /v1/correct's `type`) and its ERRANT-style `category`. */
export function classify(original, replacement) {
  const operation = original.trim() === "" ? "M" : replacement.trim() === "" ? "U" : "R";
  if (!original.trim() && !replacement.trim()) return { type: "whitespace", category: "R:ORTH" };
  if (original.toLowerCase() === replacement.toLowerCase()) return { type: "capitalisation", category: "R:ORTH" };
  const marks = /^[^\p{L}\p{N}]*$/u;
  if (marks.test(original) && marks.test(replacement)) return { type: "punctuation", category: `${operation}:PUNCT` };
  return { type: "grammar", category: `${operation}:OTHER` };
}

/** The edits that turn `source` into `output`, their offsets in UTF-16 code units plus `offset`. */
export function diffEdits(source, output, offset = 0) {
  const a = source.match(PIECE) || [];
  const b = output.match(PIECE) || [];
  const startsA = [0];
  for (const piece of a) startsA.push(startsA[startsA.length - 1] + piece.length);
  const edits = [];
  let i = 0;
  let j = 0;
  for (const [mi, mj] of [...commonPairs(a, b), [a.length, b.length]]) {
    if (mi > i || mj > j) {
      const original = a.slice(i, mi).join("");
      const replacement = b.slice(j, mj).join("");
      edits.push({ offset: offset + startsA[i], length: original.length, original, replacement, ...classify(original, replacement) });
    }
    i = mi + 1;
    j = mj + 1;
  }
  return edits;
}

/** `text` with `edits` (offsets into it, in order, not overlapping) applied. */
export function applyEdits(text, edits) {
  let result = "";
  let at = 0;
  for (const edit of edits) {
    result += text.slice(at, edit.offset) + edit.replacement;
    at = edit.offset + edit.length;
  }
  return result + text.slice(at);
}
