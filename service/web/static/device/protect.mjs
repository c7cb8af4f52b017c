// What the device engine must not rewrite: a conservative reading of service/text/protect.py, without its parsers.
//
// The service masks, hides or keeps protected spans (URLs, e-mail addresses, paths, code, markdown syntax, emoji and
// other scripts, numbers) before the model reads a sentence. The device engine has neither linkify nor markdown-it,
// so it corrects only sentences made of plain prose: letters and digits of ASCII, blanks and common punctuation,
// with nothing that could start any of the service's atoms (a dot inside a word, as in a domain, a file name or
// "e.g."; camelCase; a call's parenthesis; "::" or "--flag"; a hex hash; an IP address; "localhost"; a word over
// 100 characters; an SQL statement in capitals; an emoticon, ":)" or "xD"), on a line that is neither code (an import,
// a definition, a line ending in ");" or "{") nor opened by a list or block marker ("- ", "1.", "a) ", "---"). Windows
// paths, markdown links and other emoticons hold a character plain prose has not. Every other sentence is left as
// written (its detail says `dropped: "protected"`; the auto engine then asks the server, which reads it with its
// spans). Precision before recall: such sentences are rare in learners' prose (44 of FCE dev's 2,253, 14 of JFLEG
// dev's 757).
//
// Numbers are read as written and never edited, as the service keeps them: no edit may change or split one (an
// insertion at either end leaves it whole). An edit that brings in a character other than plain prose's is dropped
// too (the service drops those the model cannot read). tests/web/test_device_modules.py checks on dev sets, English prose and
// generated text that every sentence corrected here holds no span of the service's but such numbers, the same ones.

const PLAIN = String.raw`A-Za-z0-9 \t\n\r,;:!?'"().\u2019\u2018\u201c\u201d\-`; // plain prose's characters
const NOT_PLAIN = new RegExp(`[^${PLAIN}]`, "u");
// each found on its own (none hides another's match)
const LEFT_ALONE = [
  `[^${PLAIN}]`,
  String.raw`(?<![A-Za-z0-9_])[a-z]+[A-Z]`, // camelCase, iPhone (not McDonald)
  String.raw`[A-Za-z0-9_]\(`, // f(x)
  String.raw`[A-Za-z0-9\-]\.[A-Za-z]|[A-Za-z]\.[0-9]`, // example.com, main.py, os.path, e.g.
  String.raw`(?<!\d)\d+\.\d+\.\d+\.\d`, // an IP address
  String.raw`::|--[A-Za-z]|localhost|0x[0-9A-Fa-f]|\.7z`, // std::vector, --flag, 0x1F, a.7z
  String.raw`\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b`, // a hash
  String.raw`\S{101,}`, // no word is that long
  // an SQL statement in capitals up to its semicolon (the service masks one with its second keyword; braces, the
  // service's other inline code, are not plain)
  String.raw`(?<![A-Za-z0-9_])(?:SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|TRUNCATE)\s[^;\n]{0,1024};`,
  // code lines, as the service's _CODE_LINE finds them (lines end at "\n" alone, as there; the blanks that open a
  // line taken once, as a possessive [ \t]*+ does, so that a line of blanks is not searched from each of them)
  String.raw`(?<![^\n])(?=([ \t]*))\1(?:(?:import|from|def|class)[ \t][^\n]*|[)\]}]+[;,]?[ \t]*|[^\n]*(?:\{|\);)[ \t]*)(?![^\n])`,
  // an emoticon of plain prose's characters, as the service's _EMOTICON finds them and more (not "10:30")
  String.raw`(?<![0-9])[:;=]'?-?(?:[()]+|[DP]+|[pOo03])(?![A-Za-z0-9])|(?<![A-Za-z0-9_])[xX]D+(?![A-Za-z0-9])|-\.-`,
  // a markdown block marker or a list item's opening a line (markdown-it ends lines at "\r" too), with the item's
  // first word, which the service keeps (and a sentence may start at: "1.\tX" is two)
  String.raw`(?<![^\n\r])[ \t]*(?:>[ \t]?)*(?:[-+>=*\u2022\u25e6\u25aa\u25b8\u25ba\u2023\u2043\u2219\u00b7]|\(?\d{1,9}[.)]|\(?[A-Za-z][.)])(?:[ \t]+\S+)?`,
].map((rule) => new RegExp(rule, "gu"));

// service/text/protect.py's _NUMBER, less what plain prose cannot hold (currencies, percent and degree signs)
const NUMBER = /(?<![A-Za-z0-9_.,])(?:[vV](?=\d+\.\d))?[-+]?\d{1,64}(?:[.,:/'\u2019-]\d{1,64}){0,8}(?:[a-zA-Z]{1,3}\b)?/gu;

const WORD_RUN = /\S+/gu;
const spansOf = (pattern, text) => [...text.matchAll(pattern)].map((m) => [m.index, m.index + m[0].length]);

/**
 * The [start, end) runs of `text` (UTF-16 offsets, sorted, disjoint) that keep any sentence touching them from being
 * corrected: each stretch found, with the words it is in (up to the blanks either side), as the service's atoms are
 * whole words and no edit may end where one starts or start where it ends. Linear in the text's length.
 */
export function leftAlone(text) {
  const found = LEFT_ALONE.flatMap((rule) => spansOf(rule, text));
  const flagged = new Uint8Array(text.length);
  for (const [start, end] of found) flagged.fill(1, start, end);
  const words = spansOf(WORD_RUN, text).filter(([start, end]) => flagged.subarray(start, end).includes(1));
  const runs = [];
  for (const [start, end] of [...found, ...words].sort((a, b) => a[0] - b[0])) {
    const last = runs[runs.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else runs.push([start, end]);
  }
  return runs;
}

/** Whether `[start, end]` overlaps or touches one of `runs` (sorted, disjoint: a binary search). */
export function touching(runs, start, end) {
  let low = 0;
  let high = runs.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (runs[middle][1] < start) low = middle + 1;
    else high = middle;
  }
  return low < runs.length && runs[low][0] <= end;
}

/** Whether `text` holds only plain prose's characters (an edit bringing in any other is dropped). */
export function isPlain(text) {
  return !NOT_PLAIN.test(text);
}

/** The numbers of `text`, as [start, end) spans. */
export function numbers(text) {
  return spansOf(NUMBER, text);
}

/** Whether `edit` ({offset, length}) changes or splits one of `spans` (an insertion at either end leaves it whole). */
export function touches(edit, spans) {
  const start = edit.offset;
  const end = edit.offset + edit.length;
  return spans.some(([s, e]) => (start < end ? start < e && end > s : s < start && start < e));
}
