"""Greedy generation with a chain of logits processors and warpers as
Hugging Face `generate` builds them: a `LogitsProcessorList(list)` whose
`__call__` runs each object's `__call__(input_ids, scores)` in turn
(`inspect.signature` checked for extra keyword arguments), a
repetition penalty by `torch.gather(scores, 1, input_ids)`, `torch.where(score
< 0, score * penalty, score / penalty)` and `scores.scatter(1, input_ids,
score)`, a min-length processor masking the EOS column with `-inf` while
`input_ids.shape[-1] < min_length`, a temperature warper, top-k by
`scores < torch.topk(scores, top_k)[0][..., -1, None]` and `masked_fill`,
top-p by `torch.sort(scores, descending=False)`, `softmax().cumsum()`,
`sorted_indices_to_remove[..., -min_tokens_to_keep:] = 0` and
`scatter(1, sorted_indices, sorted_indices_to_remove)`; the next token by
`argmax` of the processed scores, appended with `torch.cat` inside a loop
over a fixed number of new tokens, finished sequences kept at the pad
token by `unfinished_sequences` arithmetic, the per-step scores kept in a
tuple."""
import inspect

import torch
import torch.nn as nn
import torch.nn.functional as F


class LogitsProcessor:
    def __call__(self, input_ids, scores):
        raise NotImplementedError(f"{self.__class__} is an abstract class.")


class LogitsProcessorList(list):
    def __call__(self, input_ids, scores, **kwargs):
        for processor in self:
            function_args = inspect.signature(processor.__call__).parameters
            if len(function_args) > 2:
                if not all(arg in kwargs for arg in list(function_args.keys())[2:]):
                    raise ValueError(f"Make sure that all the required parameters: {list(function_args.keys())} "
                                     f"for {processor.__class__} are passed to the logits processor.")
                scores = processor(input_ids, scores, **kwargs)
            else:
                scores = processor(input_ids, scores)
        return scores


class MinLengthLogitsProcessor(LogitsProcessor):
    def __init__(self, min_length: int, eos_token_id: int):
        if not isinstance(min_length, int) or min_length < 0:
            raise ValueError(f"`min_length` has to be a non-negative integer, but is {min_length}")
        self.min_length = min_length
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids, scores):
        cur_len = input_ids.shape[-1]
        if cur_len < self.min_length:
            scores[:, self.eos_token_id] = -float("inf")
        return scores


class RepetitionPenaltyLogitsProcessor(LogitsProcessor):
    def __init__(self, penalty: float):
        if not isinstance(penalty, float) or not (penalty > 0):
            raise ValueError(f"`penalty` has to be a strictly positive float, but is {penalty}")
        self.penalty = penalty

    def __call__(self, input_ids, scores):
        score = torch.gather(scores, 1, input_ids)
        score = torch.where(score < 0, score * self.penalty, score / self.penalty)
        return scores.scatter(1, input_ids, score)


class TemperatureLogitsWarper(LogitsProcessor):
    def __init__(self, temperature: float):
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        return scores / self.temperature


class TopKLogitsWarper(LogitsProcessor):
    def __init__(self, top_k: int, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1):
        self.top_k = max(top_k, min_tokens_to_keep)
        self.filter_value = filter_value

    def __call__(self, input_ids, scores):
        top_k = min(self.top_k, scores.size(-1))
        indices_to_remove = scores < torch.topk(scores, top_k)[0][..., -1, None]
        return scores.masked_fill(indices_to_remove, self.filter_value)


class TopPLogitsWarper(LogitsProcessor):
    def __init__(self, top_p: float, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1):
        top_p = float(top_p)
        if top_p < 0 or top_p > 1.0:
            raise ValueError(f"`top_p` has to be a float > 0 and < 1, but is {top_p}")
        self.top_p = top_p
        self.filter_value = filter_value
        self.min_tokens_to_keep = min_tokens_to_keep

    def __call__(self, input_ids, scores):
        sorted_logits, sorted_indices = torch.sort(scores, descending=False)
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        sorted_indices_to_remove = cumulative_probs <= (1 - self.top_p)
        sorted_indices_to_remove[..., -self.min_tokens_to_keep:] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
        return scores.masked_fill(indices_to_remove, self.filter_value)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=40, dim=32, heads=4, layers=2, max_len=32):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("causal", torch.triu(torch.full((max_len, max_len), float("-inf")), 1))

    def forward(self, input_ids):
        t = input_ids.shape[1]
        pos = torch.arange(t, device=input_ids.device)
        h = self.wte(input_ids) + self.wpe(pos)
        h = self.blocks(h, mask=self.causal[:t, :t], is_causal=True)
        return self.lm_head(self.ln_f(h))


class Generator(nn.Module):
    def __init__(self, eos_token_id=2, pad_token_id=0):
        super().__init__()
        self.lm = TinyCausalLM()
        self.eos_token_id = eos_token_id
        self.pad_token_id = pad_token_id

    def _get_logits_processor(self, min_length, repetition_penalty, temperature, top_k, top_p):
        processors = LogitsProcessorList()
        if repetition_penalty is not None and repetition_penalty != 1.0:
            processors.append(RepetitionPenaltyLogitsProcessor(penalty=repetition_penalty))
        if min_length is not None and self.eos_token_id is not None and min_length > 0:
            processors.append(MinLengthLogitsProcessor(min_length, self.eos_token_id))
        if temperature is not None and temperature != 1.0:
            processors.append(TemperatureLogitsWarper(temperature))
        if top_k is not None and top_k != 0:
            processors.append(TopKLogitsWarper(top_k=top_k))
        if top_p is not None and top_p < 1.0:
            processors.append(TopPLogitsWarper(top_p=top_p))
        return processors

    def forward(self, input_ids, max_new_tokens: int = 6, min_length: int = 8, repetition_penalty: float = 1.3,
                temperature: float = 0.7, top_k: int = 10, top_p: float = 0.9):
        logits_processor = self._get_logits_processor(min_length, repetition_penalty, temperature, top_k, top_p)
        unfinished_sequences = input_ids.new(input_ids.shape[0]).fill_(1)
        scores = ()
        for _ in range(max_new_tokens):
            outputs = self.lm(input_ids)
            next_token_logits = outputs[:, -1, :]
            next_tokens_scores = logits_processor(input_ids, next_token_logits)
            scores += (next_tokens_scores,)
            next_tokens = torch.argmax(next_tokens_scores, dim=-1)
            next_tokens = next_tokens * unfinished_sequences + self.pad_token_id * (1 - unfinished_sequences)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            unfinished_sequences = unfinished_sequences.mul((next_tokens != self.eos_token_id).long())
        return {"sequences": input_ids, "scores": torch.stack(scores, 1),
                "finished": unfinished_sequences == 0}


torch.manual_seed(0)
model = Generator()
model.eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randint(3, 40, (2, 5), generator=g),)
