// The device engine's decoding: service/engine/decoding's aggressive decoding, for one sentence, in JavaScript.
//
// Written against the same graph contract as service/engine/model.py: the encoder maps input_ids and
// attention_mask to cross_kv [layers, 2, batch, heads, source, head_dim]; the decoder takes input_ids,
// position_ids, past_mask, encoder_mask and one input per layer and kind (past_key_0, cross_value_1, ...), and
// returns logits [batch, new, vocabulary] and new_kv [layers, 2, batch, heads, new, head_dim]. The alignment
// and the keep bias are alignment.py's, the drafts and their verification aggressive.py's, so the output is
// greedy decoding's under the same keep bias, token for token (a test checks it against the service in
// Chromium). No dependency: the caller passes a `run(session, feeds)` and the tensor constructor.

const MAX_ANCHOR = 3;
const MAX_GUESS = 3;

function key(tokens) {
  return tokens.join(",");
}

/** Every 1-3 token n-gram of `content` -> the positions just after its occurrences. */
export function anchorsOf(content) {
  const table = new Map();
  for (let n = 1; n <= MAX_ANCHOR; n++) {
    for (let end = n; end <= content.length; end++) {
      const k = key(content.slice(end - n, end));
      if (!table.has(k)) table.set(k, []);
      table.get(k).push(end);
    }
  }
  return table;
}

/** Draft index just after a unique source n-gram equal to the output's last 1-3 tokens (longest first), or null. */
export function realign(output, anchors) {
  for (let n = Math.min(MAX_ANCHOR, output.length); n > 0; n--) {
    const ends = anchors.get(key(output.slice(output.length - n)));
    if (ends !== undefined && ends.length === 1) return ends[0];
  }
  return null;
}

/** alignment.py's Alignment: the draft (source and </s>), the pointer into it (null: not aligned), the keep bias. */
export class Alignment {
  constructor(draft, keepBias = 0, pointer = 0, lost = null, anchors = null) {
    this.draft = draft;
    this.keepBias = keepBias;
    this.pointer = pointer;
    this.lost = lost;
    this._anchors = anchors;
  }

  get anchors() {
    if (this._anchors === null) this._anchors = anchorsOf(this.draft.slice(0, -1));
    return this._anchors;
  }

  /** The keep bias at position k < count of `scores` (rows of `vocab` floats from `row0`) on the copied token. */
  lean(scores, vocab, row0, count) {
    if (!this.keepBias || this.pointer === null) return;
    const expected = this.draft.slice(this.pointer, this.pointer + count);
    expected.forEach((token, k) => addBias(scores, (row0 + k) * vocab + token, this.keepBias));
  }

  /** The keep bias at position k on the draft token of pointers[k]. */
  leanAlong(scores, vocab, row0, pointers) {
    if (!this.keepBias) return;
    pointers.forEach((pointer, k) => {
      if (pointer !== null && pointer < this.draft.length) addBias(scores, (row0 + k) * vocab + this.draft[pointer], this.keepBias);
    });
  }

  follow(output) {
    const last = output[output.length - 1];
    if (this.pointer !== null && this.pointer < this.draft.length && this.draft[this.pointer] === last) {
      this.pointer += 1;
      return;
    }
    if (this.pointer !== null) this.lost = [this.pointer, output.length - 1];
    this.pointer = realign(output, this.anchors);
  }

  guess(output) {
    if (this.lost === null) return null;
    const [index, length] = this.lost;
    if (output.length - length > MAX_GUESS) return null;
    let guess = index + 1;
    for (let near = index; near < Math.min(index + 3, this.draft.length); near++) {
      if (output.length && this.draft[near] === output[output.length - 1]) {
        guess = near + 1;
        break;
      }
    }
    return guess < this.draft.length ? guess : null;
  }

  pointersAlong(output, tokens) {
    const probe = new Alignment(this.draft, this.keepBias, this.pointer, this.lost, this.anchors);
    const pointers = [probe.pointer];
    const extended = output.slice();
    for (const token of tokens) {
      extended.push(token);
      probe.follow(extended);
      pointers.push(probe.pointer);
    }
    return pointers;
  }
}

// numpy adds a Python float to a float32 array in float32: so does this.
function addBias(scores, index, bias) {
  scores[index] = Math.fround(scores[index] + bias);
}

/** The log-probability of `token` under the logits of `scores` from `from` (`vocab` of them): types.py's
 * token_logprobs, a stable log-softmax. */
export function tokenLogprob(scores, from, vocab, token) {
  let top = -Infinity;
  for (let i = from; i < from + vocab; i++) if (scores[i] > top) top = scores[i];
  let sum = 0;
  for (let i = from; i < from + vocab; i++) sum += Math.exp(scores[i] - top);
  return scores[from + token] - top - Math.log(sum);
}

// The first index of the largest value (numpy's argmax).
function argmax(scores, from, vocab) {
  let best = from;
  for (let i = from + 1; i < from + vocab; i++) if (scores[i] > scores[best]) best = i;
  return best - from;
}

/** The length budget when none is given (types.py's default_max_new_tokens). */
export function defaultLimit(sourceLength, contract) {
  return Math.max(1, Math.min(contract.max_target_positions - contract.decoder_prefix_ids.length, 2 * sourceLength + 10));
}

/** One sentence's decoder state: the cross-attention inputs and the self-attention cache, per layer and kind. */
class SentenceState {
  constructor(model, crossKv, sourceLength) {
    const { decoder_layers: layers, decoder_heads: heads, head_dim: dim } = model.contract;
    this.model = model;
    this.sourceLength = sourceLength;
    this.block = heads * sourceLength * dim;
    this.cross = {};
    for (let layer = 0; layer < layers; layer++) {
      ["key", "value"].forEach((kind, k) => {
        const start = (layer * 2 + k) * this.block;
        this.cross[`cross_${kind}_${layer}`] = model.tensor("float32", crossKv.subarray(start, start + this.block), [1, heads, sourceLength, dim]);
      });
    }
    this.encoderMask = model.tensor("int64", new BigInt64Array(sourceLength).fill(1n), [1, sourceLength]);
    this.past = []; // [layer][kind] -> Float32Array [heads, length, dim]
    for (let layer = 0; layer < layers; layer++) this.past.push([new Float32Array(0), new Float32Array(0)]);
    this.length = 0;
  }

  /** Feed `tokens`; returns their logits (Float32Array, tokens.length rows); their keys/values join the cache. */
  async step(tokens) {
    const { contract, tensor } = this.model;
    const { decoder_layers: layers, decoder_heads: heads, head_dim: dim } = contract;
    const n = tokens.length;
    const last = contract.max_target_positions - 1;
    const feeds = {
      input_ids: tensor("int64", BigInt64Array.from(tokens, BigInt), [1, n]),
      position_ids: tensor("int64", BigInt64Array.from(tokens, (_, i) => BigInt(Math.min(this.length + i, last))), [1, n]),
      past_mask: tensor("int64", new BigInt64Array(this.length).fill(1n), [1, this.length]),
      encoder_mask: this.encoderMask,
      ...this.cross,
    };
    for (let layer = 0; layer < layers; layer++) {
      ["key", "value"].forEach((kind, k) => {
        feeds[`past_${kind}_${layer}`] = tensor("float32", this.past[layer][k], [1, heads, this.length, dim]);
      });
    }
    const out = await this.model.run("decoder", feeds);
    const fresh = out.new_kv.data; // [layers, 2, 1, heads, n, dim]
    const grown = this.length + n;
    for (let layer = 0; layer < layers; layer++) {
      for (let k = 0; k < 2; k++) {
        const merged = new Float32Array(heads * grown * dim);
        const old = this.past[layer][k];
        for (let h = 0; h < heads; h++) {
          merged.set(old.subarray(h * this.length * dim, (h + 1) * this.length * dim), h * grown * dim);
          const from = ((layer * 2 + k) * heads + h) * n * dim;
          merged.set(fresh.subarray(from, from + n * dim), (h * grown + this.length) * dim);
        }
        this.past[layer][k] = merged;
      }
    }
    this.length = grown;
    return out.logits.data;
  }

  /** Roll the cache back to its first `length` tokens. */
  truncate(length) {
    if (length === this.length) return;
    const { decoder_heads: heads, head_dim: dim } = this.model.contract;
    for (const kinds of this.past) {
      for (let k = 0; k < 2; k++) {
        const kept = new Float32Array(heads * length * dim);
        for (let h = 0; h < heads; h++) kept.set(kinds[k].subarray(h * this.length * dim, (h * this.length + length) * dim), h * length * dim);
        kinds[k] = kept;
      }
    }
    this.length = length;
  }
}

/**
 * Aggressive decoding of one sentence's content ids: `model` is {contract, vocab, tensor(type, data, dims),
 * run(name, feeds) -> outputs}. Returns {tokens, passes, finished, logprobs}: each token's log-probability under the
 * logits it was chosen from, the keep bias included (aggressive.py's DecodeResult.logprobs).
 */
export async function decodeSentence(model, source, { keepBias = 0, maxDraft = 16, maxGuess = 16 } = {}) {
  const c = model.contract;
  const vocab = model.vocab;
  const ids = [...c.source_prefix_ids, ...source, ...c.source_suffix_ids];
  const encoded = await model.run("encoder", {
    input_ids: model.tensor("int64", BigInt64Array.from(ids, BigInt), [1, ids.length]),
    attention_mask: model.tensor("int64", new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
  });
  const state = new SentenceState(model, encoded.cross_kv.data, ids.length);
  const align = new Alignment([...source, c.eos_token_id], keepBias);
  const limit = defaultLimit(source.length, c);
  const tokens = [];
  const logprobs = [];
  let pending = c.decoder_prefix_ids.slice();
  let passes = 0;
  for (;;) {
    const room = limit - tokens.length - 1;
    const pointer = align.pointer;
    let drafted = [];
    let guessed = null;
    const guess = pointer === null && maxGuess ? align.guess(tokens) : null;
    if (guess !== null) {
      drafted = align.draft.slice(guess, guess + Math.min(room, maxGuess));
      guessed = align.pointersAlong(tokens, drafted);
    } else if (pointer !== null) {
      drafted = align.draft.slice(pointer, pointer + Math.min(room, maxDraft));
    }
    const before = state.length;
    const scores = await state.step([...pending, ...drafted]);
    passes += 1;
    const base = pending.length - 1;
    if (guessed !== null) align.leanAlong(scores, vocab, base, guessed);
    else align.lean(scores, vocab, base, drafted.length + 1);
    let matched = 0;
    while (matched < drafted.length && argmax(scores, (base + matched) * vocab, vocab) === drafted[matched]) matched += 1;
    let gained = [...drafted.slice(0, matched), argmax(scores, (base + matched) * vocab, vocab)];
    gained.forEach((token, k) => logprobs.push(tokenLogprob(scores, (base + k) * vocab, vocab, token)));
    const length = before + pending.length + matched;
    let finished = false;
    const eos = gained.indexOf(c.eos_token_id);
    if (eos >= 0) {
      gained = gained.slice(0, eos);
      logprobs.length = tokens.length + eos;
      finished = true;
    }
    tokens.push(...gained);
    if (finished) return { tokens, passes, finished: true, logprobs };
    if (tokens.length >= limit) return { tokens, passes, finished: false, logprobs };
    pending = [tokens[tokens.length - 1]];
    if (guessed !== null) {
      for (let end = tokens.length - gained.length + 1; end <= tokens.length; end++) align.follow(tokens.slice(0, end));
    } else {
      if (align.pointer !== null) align.pointer += matched;
      align.follow(tokens);
    }
    state.truncate(length);
  }
}
