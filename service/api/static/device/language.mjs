// Which sentences the device engine reads as English: the model corrects English only, and rewrites text in another
// language into nonsense ("Gestern Abend" -> "G pursue Abend"). The service asks fastText (service/text/language.py);
// the device has the model's vocabulary instead (its words by frequency in English text, as the spelling stage reads
// them) and leaves a sentence alone when under 40% of its words are among the 5,000 most frequent English words.
// Sentences of fewer than three words are read (too few to judge). On the dev sets this leaves 6 of 2,964 lines,
// all names ("Yu Phu Tung."), and every sentence of the service's language tests in another Latin-script language,
// typed without its accents (tests/api/test_device_modules.py); other scripts are left alone by protect.mjs.

export const COMMON_WORDS = 5000;
const MIN_WORDS = 3;
const MIN_SHARE = 0.4;
const WORD = /[A-Za-z]+/g;

/** The `count` most frequent words of a vocabulary file ("word count" lines, most frequent first), lowercased. */
export function commonWords(vocabulary, count = COMMON_WORDS) {
  const words = new Set();
  for (const line of vocabulary.split("\n", count)) {
    const word = line.split(" ", 1)[0];
    if (word) words.add(word.toLowerCase());
  }
  return words;
}

/**
 * Whether `sentence` reads as another language: three words or more, under 40% of them among `common` (never
 * where `common` is empty: a model without a vocabulary).
 */
export function foreign(sentence, common) {
  const words = sentence.match(WORD) || [];
  if (words.length < MIN_WORDS || common.size === 0) return false;
  return words.filter((word) => common.has(word.toLowerCase())).length < MIN_SHARE * words.length;
}
