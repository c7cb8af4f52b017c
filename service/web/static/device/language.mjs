// Which sentences the device engine reads as English: the model corrects English only, and rewrites text in another
// language into nonsense ("Gestern Abend" -> "G pursue Abend"). The service asks fastText (service/text/language.py);
// the device has the model's vocabulary instead (its words by frequency in English text, as the spelling stage reads
// them) and leaves a sentence alone when under 40% of its words are among the 5,000 most frequent English words.
// Sentences of fewer than three words are read (too few to judge). On the dev sets this leaves 6 of 2,964 lines,
// all names ("Yu Phu Tung."), and every sentence of the service's language tests in another Latin-script language,
// typed without its accents (tests/web/test_device_modules.py); other scripts are left alone by protect.mjs.
// A sentence holding a quotation in another language is left alone too, as the service masks one ("Wer nicht wagt,
// der nicht gewinnt", "C'est la vie": fastText's and the vocabulary's call there): a quotation of two words or more
// of two letters or more, capitalised words after the first (names, titles: "Over the Rainbow") left out, under half
// of them common. It leaves no line of the dev sets alone.

export const COMMON_WORDS = 5000;
const MIN_WORDS = 3;
const MIN_SHARE = 0.4;
const WORD = /[A-Za-z]+/g;
const QUOTE_MIN_WORDS = 2;
const QUOTE_MIN_SHARE = 0.5;
// service/text/protect.py's _QUOTATION, less the quotation marks plain prose has not (guillemets, low quotes)
const QUOTATION =
  /"([^"\n\r]{1,256})"|\u201c([^\u201c\u201d\n\r]{1,256})\u201d|\u2018((?:[^\u2018\u2019\n\r]|\u2019(?=\w)){1,256})\u2019(?!\w)|(?<!\w)'((?:[^'\n\r]|'(?=\w)){1,256})'(?!\w)/g;
// a quotation mark left unpaired in the sentence (not an apostrophe inside a word, nor a tokenised "'s"): a quotation
// the service found may run on into the next sentence, or start in the one before
const UNPAIRED = /["\u201c\u201d]|(?<!\w)['\u2018\u2019](?=\w)(?!(?:s|t|d|m|re|ll|ve)\b)|(?<=\w)['\u2018\u2019](?!\w)/g;

const share = (words, common) => words.filter((word) => common.has(word.toLowerCase())).length / words.length;

/** Whether a quoted `text` of `minWords` judged words or more reads as another language (the header comment). */
function foreignQuotation(text, common, minWords = QUOTE_MIN_WORDS) {
  const words = (text.match(WORD) || []).filter(
    (word, index) => word.length > 1 && (index === 0 || word[0] === word[0].toLowerCase()),
  );
  return words.length >= minWords && share(words, common) < QUOTE_MIN_SHARE;
}

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
 * Whether `sentence` reads as another language, or holds a quotation in one: three words or more, under 40% of them
 * among `common`; or a quotation of which under half the words judged are, or the words before or after a quotation
 * mark left unpaired (the header comment; never where `common` is empty: a model without a vocabulary).
 */
export function foreign(sentence, common) {
  if (common.size === 0) return false;
  const words = sentence.match(WORD) || [];
  if (words.length >= MIN_WORDS && share(words, common) < MIN_SHARE) return true;
  for (const match of sentence.matchAll(QUOTATION)) {
    if (foreignQuotation(match.slice(1).find((group) => group !== undefined), common)) return true;
  }
  const rest = sentence.replace(QUOTATION, (quotation) => " ".repeat(quotation.length));
  for (const { index } of rest.matchAll(UNPAIRED)) {
    // a piece of a quotation: one word may be all this sentence holds of it
    if (foreignQuotation(rest.slice(0, index), common, 1) || foreignQuotation(rest.slice(index + 1), common, 1)) {
      return true;
    }
  }
  return false;
}
