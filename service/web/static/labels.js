// The writer's names of the edits' categories (the ERRANT codes of service/text/categories.py): "R:VERB:FORM" is
// "Verb form", "M:DET" "Missing word", "R:ORTH" of type "whitespace" "Spacing". The editor shows these on its cards
// and legend, the code only as a tooltip. tests/system/test_editor.py checks every operation and category has one.
"use strict";

const CATEGORY_NAMES = {
  ADJ: "Adjective",
  "ADJ:FORM": "Adjective form",
  ADV: "Adverb",
  CONJ: "Conjunction",
  CONTR: "Contraction",
  DET: "Article or determiner",
  MORPH: "Word form",
  NOUN: "Noun",
  "NOUN:INFL": "Noun form",
  "NOUN:NUM": "Singular or plural",
  "NOUN:POSS": "Possessive",
  ORTH: "Capitals or spacing",
  OTHER: "Word choice",
  PART: "Particle",
  PREP: "Preposition",
  PRON: "Pronoun",
  PUNCT: "Punctuation",
  SPELL: "Spelling",
  VERB: "Verb",
  "VERB:FORM": "Verb form",
  "VERB:INFL": "Verb form",
  "VERB:SVA": "Subject-verb agreement",
  "VERB:TENSE": "Verb tense",
  WO: "Word order",
};

/** What a writer calls an edit of ERRANT `code` ("R:DET") and, where known, `type` ("whitespace"). */
function categoryLabel(code, type) {
  const [operation, ...rest] = String(code || "").split(":");
  const category = rest.join(":");
  if (category === "PUNCT") return { M: "Missing punctuation", U: "Extra punctuation" }[operation] || "Punctuation";
  if (category === "ORTH" || type === "whitespace" || type === "capitalisation") {
    return { whitespace: "Spacing", capitalisation: "Capitals" }[type] || CATEGORY_NAMES.ORTH;
  }
  if (operation === "M") return "Missing word";
  if (operation === "U") return "Unneeded word";
  return CATEGORY_NAMES[category] || "Suggestion";
}

/** How sure the model is of an edit, in words, from its `confidence` (0-1); null where the answer has none. */
function confidenceLabel(confidence) {
  if (typeof confidence !== "number" || !Number.isFinite(confidence)) return null;
  const word = confidence >= 0.9 ? "almost certain" : confidence >= 0.6 ? "likely" : "possible";
  return `${word} · ${Math.round(confidence * 100)}%`;
}
