// The device engine's sentences: Intl.Segmenter's, without the whitespace around them.

/** The sentences of `text` as [start, end) spans without their leading and trailing whitespace (UTF-16 offsets). */
export function sentences(text) {
  const spans = [];
  for (const { index, segment } of new Intl.Segmenter("en", { granularity: "sentence" }).segment(text)) {
    const content = segment.trimEnd();
    const lead = content.length - content.trimStart().length;
    if (content.trim()) spans.push([index + lead, index + content.length]);
  }
  return spans;
}
