"""End-to-end coreference as AllenNLP's `CoreferenceResolver` (after Lee et
al.) writes it: every span up to a width enumerated with Python loops into a
(batch, spans, 2) index tensor, spans masked where the start is -1, a
contextual BiLSTM, the endpoint span extractor by `batched_index_select`
(flattened offsets `indices + arange(batch) * seq_len`) with a span-width
embedding, the self-attentive extractor by a masked softmax over each span's
tokens, a mention scorer, pruning to the top `ceil(0.4 * words)` spans by
`topk` and the kept indices re-sorted to text order, the antecedents of each
span by offsets `arange(1, k + 1)` from `arange(num_spans)` with `relu` and
a validity mask whose log is added to the scores, distances bucketed by
`floor(log2(d))` with identity buckets, pair embeddings (target, antecedent,
product, distance), a dummy zero-score antecedent `cat`ed in front, and the
marginal log-likelihood of gold antecedents by `masked_log_softmax` and
`logsumexp` of a log mask; predictions by `max(-1)` minus one."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def get_range_vector(size, device):
    return torch.arange(0, size, dtype=torch.long, device=device)


def flatten_and_batch_shift_indices(indices, sequence_length):
    offsets = get_range_vector(indices.size(0), indices.device) * sequence_length
    for _ in range(len(indices.size()) - 1):
        offsets = offsets.unsqueeze(1)
    offset_indices = indices + offsets
    return offset_indices.view(-1)


def batched_index_select(target, indices, flattened_indices=None):
    if flattened_indices is None:
        flattened_indices = flatten_and_batch_shift_indices(indices, target.size(1))
    flattened_target = target.view(-1, target.size(-1))
    flattened_selected = flattened_target.index_select(0, flattened_indices)
    selected_shape = list(indices.size()) + [target.size(-1)]
    return flattened_selected.view(*selected_shape)


def masked_log_softmax(vector, mask, dim=-1):
    if mask is not None:
        while mask.dim() < vector.dim():
            mask = mask.unsqueeze(1)
        vector = vector + (mask + 1e-45).log()
    return F.log_softmax(vector, dim=dim)


def bucket_values(distances, num_identity_buckets=4, num_total_buckets=10):
    logspace_index = (distances.float().log() / math.log(2)).floor().long() + (num_identity_buckets - 1)
    use_identity_mask = (distances <= num_identity_buckets).long()
    use_buckets_mask = 1 + (-1 * use_identity_mask)
    combined_index = use_identity_mask * distances + use_buckets_mask * logspace_index
    return combined_index.clamp(0, num_total_buckets - 1)


def enumerate_spans(num_words, max_span_width):
    spans = []
    for start in range(num_words):
        for end in range(start, min(start + max_span_width, num_words)):
            spans.append((start, end))
    return spans


class CoreferenceResolver(nn.Module):
    def __init__(self, vocab=60, dim=12, hidden=8, max_span_width=3, feature_size=4,
                 max_antecedents=5, spans_per_word=0.4):
        super().__init__()
        self._text_field_embedder = nn.Embedding(vocab, dim, padding_idx=0)
        self._context_layer = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self._span_width_embedding = nn.Embedding(max_span_width, feature_size)
        self._global_attention = nn.Linear(2 * hidden, 1)
        span_dim = 2 * (2 * hidden) + feature_size + dim
        self._mention_feedforward = nn.Sequential(nn.Linear(span_dim, 16), nn.ReLU(), nn.Linear(16, 1))
        self._distance_embedding = nn.Embedding(10, feature_size)
        self._antecedent_feedforward = nn.Sequential(nn.Linear(3 * span_dim + feature_size, 16), nn.ReLU(),
                                                     nn.Linear(16, 1))
        self._max_span_width = max_span_width
        self._max_antecedents = max_antecedents
        self._spans_per_word = spans_per_word

    def _endpoint_spans(self, contextualized, spans):
        span_starts, span_ends = [index.squeeze(-1) for index in spans.split(1, dim=-1)]
        start_embeddings = batched_index_select(contextualized, span_starts)
        end_embeddings = batched_index_select(contextualized, span_ends)
        widths = span_ends - span_starts
        return torch.cat([start_embeddings, end_embeddings, self._span_width_embedding(widths)], -1)

    def _attended_spans(self, text_embeddings, contextualized, spans):
        global_logits = self._global_attention(contextualized)
        span_starts, span_ends = spans.split(1, dim=-1)
        span_widths = span_ends - span_starts
        max_batch_span_width = self._max_span_width
        max_span_range_indices = get_range_vector(max_batch_span_width, text_embeddings.device).view(1, 1, -1)
        span_mask = (max_span_range_indices <= span_widths).float()
        raw_span_indices = span_ends - max_span_range_indices
        span_mask = span_mask * (raw_span_indices >= 0).float()
        span_indices = F.relu(raw_span_indices.float()).long()
        flat_span_indices = flatten_and_batch_shift_indices(span_indices, text_embeddings.size(1))
        span_embeddings = batched_index_select(text_embeddings, span_indices, flat_span_indices)
        span_logits = batched_index_select(global_logits, span_indices, flat_span_indices).squeeze(-1)
        span_weights = F.softmax(span_logits + (span_mask + 1e-45).log(), dim=-1)
        return (span_weights.unsqueeze(-1) * span_embeddings).sum(-2)

    @staticmethod
    def _generate_valid_antecedents(num_spans_to_keep, max_antecedents, device):
        target_indices = get_range_vector(num_spans_to_keep, device).unsqueeze(1)
        valid_antecedent_offsets = (get_range_vector(max_antecedents, device) + 1).unsqueeze(0)
        raw_antecedent_indices = target_indices - valid_antecedent_offsets
        valid_antecedent_log_mask = (raw_antecedent_indices >= 0).float().unsqueeze(0).log()
        valid_antecedent_indices = F.relu(raw_antecedent_indices.float()).long()
        return valid_antecedent_indices, valid_antecedent_offsets, valid_antecedent_log_mask

    def forward(self, text, spans, span_labels=None):
        text_embeddings = self._text_field_embedder(text)
        document_length = text_embeddings.size(1)
        num_spans = spans.size(1)
        text_mask = (text != 0).float()
        span_mask = (spans[:, :, 0] >= 0).squeeze(-1).float()
        spans = F.relu(spans.float()).long()

        contextualized, _ = self._context_layer(text_embeddings)
        contextualized = (contextualized * text_mask.unsqueeze(-1)).contiguous()
        endpoint = self._endpoint_spans(contextualized, spans)
        attended = self._attended_spans(text_embeddings, contextualized, spans)
        span_embeddings = torch.cat([endpoint, attended], -1)

        mention_scores = self._mention_feedforward(span_embeddings).squeeze(-1)
        mention_scores = mention_scores + (span_mask + 1e-45).log()
        num_spans_to_keep = int(math.floor(self._spans_per_word * document_length))
        _, top_indices = mention_scores.topk(num_spans_to_keep, 1)
        top_span_indices, _ = torch.sort(top_indices, 1)
        flat_top_span_indices = flatten_and_batch_shift_indices(top_span_indices, num_spans)
        top_span_embeddings = batched_index_select(span_embeddings, top_span_indices, flat_top_span_indices)
        top_span_mention_scores = batched_index_select(mention_scores.unsqueeze(-1), top_span_indices,
                                                       flat_top_span_indices).squeeze(-1)
        top_spans = batched_index_select(spans, top_span_indices, flat_top_span_indices)

        max_antecedents = min(self._max_antecedents, num_spans_to_keep)
        valid_antecedent_indices, valid_antecedent_offsets, valid_antecedent_log_mask = \
            self._generate_valid_antecedents(num_spans_to_keep, max_antecedents, text.device)
        candidate_antecedent_embeddings = top_span_embeddings[:, valid_antecedent_indices]
        candidate_antecedent_mention_scores = top_span_mention_scores[:, valid_antecedent_indices]

        target_embeddings = top_span_embeddings.unsqueeze(2).expand_as(candidate_antecedent_embeddings)
        antecedent_distance_embeddings = self._distance_embedding(bucket_values(valid_antecedent_offsets))
        antecedent_distance_embeddings = antecedent_distance_embeddings.unsqueeze(0).expand(
            candidate_antecedent_embeddings.size(0), candidate_antecedent_embeddings.size(1), -1, -1)
        span_pair_embeddings = torch.cat([target_embeddings, candidate_antecedent_embeddings,
                                          candidate_antecedent_embeddings * target_embeddings,
                                          antecedent_distance_embeddings], -1)
        antecedent_scores = self._antecedent_feedforward(span_pair_embeddings).squeeze(-1)
        antecedent_scores = antecedent_scores + top_span_mention_scores.unsqueeze(-1) \
            + candidate_antecedent_mention_scores + valid_antecedent_log_mask
        shape = [antecedent_scores.size(0), antecedent_scores.size(1), 1]
        dummy_scores = antecedent_scores.new_zeros(*shape)
        coreference_scores = torch.cat([dummy_scores, antecedent_scores], -1)

        _, predicted_antecedents = coreference_scores.max(2)
        predicted_antecedents = predicted_antecedents - 1
        output_dict = {"top_spans": top_spans, "antecedent_indices": valid_antecedent_indices,
                       "predicted_antecedents": predicted_antecedents}
        if span_labels is not None:
            pruned_gold_labels = batched_index_select(span_labels.unsqueeze(-1), top_span_indices,
                                                      flat_top_span_indices)
            antecedent_labels = pruned_gold_labels.squeeze(-1)[:, valid_antecedent_indices]
            # antecedents before the document's start never match a cluster
            antecedent_labels = antecedent_labels.masked_fill(torch.isinf(valid_antecedent_log_mask), -100)
            target_labels = pruned_gold_labels.expand_as(antecedent_labels)
            same_cluster = (target_labels == antecedent_labels).float()
            non_dummy = (target_labels >= 0).float()
            pairwise_labels = same_cluster * non_dummy
            dummy_labels = (1 - pairwise_labels).prod(-1, keepdim=True)
            gold_antecedent_labels = torch.cat([dummy_labels, pairwise_labels], -1)
            top_span_mask = batched_index_select(span_mask.unsqueeze(-1), top_span_indices,
                                                 flat_top_span_indices)
            coreference_log_probs = masked_log_softmax(coreference_scores, top_span_mask)
            correct_antecedent_log_probs = coreference_log_probs + gold_antecedent_labels.log()
            negative_marginal_log_likelihood = -torch.logsumexp(correct_antecedent_log_probs, -1).sum()
            output_dict["loss"] = negative_marginal_log_likelihood
        return output_dict


torch.manual_seed(0)
model = CoreferenceResolver().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    words = 10
    text = torch.randint(1, 60, (2, words), generator=g)
    text[1, 8:] = 0
    all_spans = enumerate_spans(words, 3)
    spans = torch.tensor([all_spans, all_spans])
    # the second document is shorter: its spans past the end are padding (-1)
    spans[1][spans[1][:, 1] >= 8] = -1
    span_labels = torch.randint(-1, 3, (2, len(all_spans)), generator=g)
    return text, spans, span_labels
