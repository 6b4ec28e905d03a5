"""BiDAF reading comprehension as AllenNLP writes it: a TextField dict of
token ids and character ids (`{"tokens": {"tokens": ids}, "token_characters":
{"token_characters": chars}}`), `get_text_field_mask` from any nonzero id,
a character CNN run through a TimeDistributed-style view (batch and words
merged), max over time per filter, a Highway layer computing carry gates by
`chunk(2, dim=-1)`, a bidirectional LSTM encoder, the trilinear similarity
(x, y, x * y) by broadcasting, `util.masked_softmax` (multiply by the mask,
renormalise with a 1e-13 epsilon), `replace_masked_values` with -1e7,
query-to-context attention by max over the question, the modelling LSTM,
span start/end log-softmaxes, and `get_best_span` by the outer sum of the
two and `triu` of a -inf lower triangle, argmax over the flattened matrix
split back into start and end by `//` and `%`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def get_text_field_mask(text_field_tensors, num_wrapping_dims=0):
    # AllenNLP picks the tensor with the fewest dimensions and marks nonzero ids
    tensor_dims = [(t.dim(), t) for indexer in text_field_tensors.values() for t in indexer.values()]
    tensor_dims.sort(key=lambda x: x[0])
    smallest_dim = tensor_dims[0][0] - num_wrapping_dims
    if smallest_dim == 2:
        return tensor_dims[0][1] != 0
    if smallest_dim == 3:
        return (tensor_dims[0][1] > 0).any(dim=-1)
    raise ValueError(f"Expected a tensor with dimension 2 or 3, found {smallest_dim}")


def masked_softmax(vector, mask, dim=-1):
    if mask is None:
        return F.softmax(vector, dim=dim)
    while mask.dim() < vector.dim():
        mask = mask.unsqueeze(1)
    result = F.softmax(vector * mask, dim=dim)
    result = result * mask
    return result / (result.sum(dim=dim, keepdim=True) + 1e-13)


def replace_masked_values(tensor, mask, replace_with):
    if tensor.dim() != mask.dim():
        raise ValueError(f"tensor.dim() ({tensor.dim()}) != mask.dim() ({mask.dim()})")
    return tensor.masked_fill(~mask, replace_with)


def weighted_sum(matrix, attention):
    if attention.dim() == 2 and matrix.dim() == 3:
        return attention.unsqueeze(1).bmm(matrix).squeeze(1)
    return attention.bmm(matrix)


def get_best_span(span_start_logits, span_end_logits):
    if span_start_logits.dim() != 2 or span_end_logits.dim() != 2:
        raise ValueError("Input shapes must be (batch_size, passage_length)")
    batch_size, passage_length = span_start_logits.size()
    device = span_start_logits.device
    span_log_probs = span_start_logits.unsqueeze(2) + span_end_logits.unsqueeze(1)
    span_log_mask = torch.triu(torch.ones((passage_length, passage_length), device=device)).log()
    valid_span_log_probs = span_log_probs + span_log_mask
    best_spans = valid_span_log_probs.view(batch_size, -1).argmax(-1)
    span_start_indices = torch.div(best_spans, passage_length, rounding_mode="trunc")
    span_end_indices = best_spans % passage_length
    return torch.stack([span_start_indices, span_end_indices], dim=-1)


class Highway(nn.Module):
    def __init__(self, input_dim, num_layers=1):
        super().__init__()
        self._layers = nn.ModuleList([nn.Linear(input_dim, input_dim * 2) for _ in range(num_layers)])
        for layer in self._layers:
            # carry by default: the gate's bias starts positive
            layer.bias[input_dim:].data.fill_(1)

    def forward(self, inputs):
        current_input = inputs
        for layer in self._layers:
            projected_input = layer(current_input)
            linear_part = current_input
            nonlinear_part, gate = projected_input.chunk(2, dim=-1)
            nonlinear_part = F.relu(nonlinear_part)
            gate = torch.sigmoid(gate)
            current_input = gate * linear_part + (1 - gate) * nonlinear_part
        return current_input


class CharCnnEncoder(nn.Module):
    def __init__(self, num_chars, char_dim, num_filters, ngram_filter_sizes=(2, 3)):
        super().__init__()
        self.embedding = nn.Embedding(num_chars, char_dim, padding_idx=0)
        self._convolution_layers = nn.ModuleList(
            [nn.Conv1d(char_dim, num_filters, kernel_size=n) for n in ngram_filter_sizes])
        self._output_dim = num_filters * len(ngram_filter_sizes)

    def forward(self, chars):
        # TimeDistributed: words of every passage in one batch
        batch, words, length = chars.size()
        flat = chars.contiguous().view(-1, length)
        mask = (flat != 0).float()
        tokens = self.embedding(flat) * mask.unsqueeze(-1)
        tokens = torch.transpose(tokens, 1, 2)
        filter_outputs = []
        for i in range(len(self._convolution_layers)):
            convolution_layer = getattr(self, "_convolution_layers")[i]
            filter_outputs.append(F.relu(convolution_layer(tokens)).max(dim=2)[0])
        maxpool_output = torch.cat(filter_outputs, dim=1) if len(filter_outputs) > 1 else filter_outputs[0]
        return maxpool_output.view(batch, words, -1)


class BidirectionalAttentionFlow(nn.Module):
    def __init__(self, vocab=50, num_chars=30, word_dim=12, char_dim=6, num_filters=6, hidden=10):
        super().__init__()
        self.word_embedding = nn.Embedding(vocab, word_dim, padding_idx=0)
        self.char_encoder = CharCnnEncoder(num_chars, char_dim, num_filters)
        encoding_in = word_dim + self.char_encoder._output_dim
        self._highway_layer = Highway(encoding_in, num_layers=2)
        self._phrase_layer = nn.LSTM(encoding_in, hidden, batch_first=True, bidirectional=True)
        encoding_dim = 2 * hidden
        self._matrix_attention = nn.Linear(3 * encoding_dim, 1)
        self._modeling_layer = nn.LSTM(4 * encoding_dim, hidden, batch_first=True, bidirectional=True)
        modeling_dim = 2 * hidden
        self._span_start_predictor = nn.Linear(4 * encoding_dim + modeling_dim, 1)
        self._span_end_encoder = nn.LSTM(4 * encoding_dim + 3 * modeling_dim, hidden, batch_first=True,
                                         bidirectional=True)
        self._span_end_predictor = nn.Linear(4 * encoding_dim + 2 * hidden, 1)
        self._mask_lstms = True

    def _embed(self, field):
        words = self.word_embedding(field["tokens"]["tokens"])
        chars = self.char_encoder(field["token_characters"]["token_characters"])
        return self._highway_layer(torch.cat([words, chars], dim=-1))

    def _similarity(self, x, y):
        # trilinear: w . [x; y; x * y] for every pair of positions
        x_tiled = x.unsqueeze(2).expand(x.size(0), x.size(1), y.size(1), x.size(2))
        y_tiled = y.unsqueeze(1).expand(y.size(0), x.size(1), y.size(1), y.size(2))
        combined = torch.cat([x_tiled, y_tiled, x_tiled * y_tiled], dim=-1)
        return self._matrix_attention(combined).squeeze(-1)

    def forward(self, question, passage, span_start=None, span_end=None):
        embedded_question = self._embed(question)
        embedded_passage = self._embed(passage)
        batch_size = embedded_question.size(0)
        passage_length = embedded_passage.size(1)
        question_mask = get_text_field_mask(question)
        passage_mask = get_text_field_mask(passage)
        question_lstm_mask = question_mask if self._mask_lstms else None
        passage_lstm_mask = passage_mask if self._mask_lstms else None

        encoded_question, _ = self._phrase_layer(embedded_question)
        encoded_question = encoded_question * question_lstm_mask.unsqueeze(-1).float()
        encoded_passage, _ = self._phrase_layer(embedded_passage)
        encoded_passage = encoded_passage * passage_lstm_mask.unsqueeze(-1).float()
        encoding_dim = encoded_question.size(-1)

        passage_question_similarity = self._similarity(encoded_passage, encoded_question)
        passage_question_attention = masked_softmax(passage_question_similarity, question_mask.float())
        passage_question_vectors = weighted_sum(encoded_question, passage_question_attention)

        masked_similarity = replace_masked_values(passage_question_similarity,
                                                  question_mask.unsqueeze(1), -1e7)
        question_passage_similarity = masked_similarity.max(dim=-1)[0].squeeze(-1)
        question_passage_attention = masked_softmax(question_passage_similarity, passage_mask.float())
        question_passage_vector = weighted_sum(encoded_passage, question_passage_attention)
        tiled_question_passage_vector = question_passage_vector.unsqueeze(1).expand(
            batch_size, passage_length, encoding_dim)

        final_merged_passage = torch.cat([
            encoded_passage, passage_question_vectors,
            encoded_passage * passage_question_vectors,
            encoded_passage * tiled_question_passage_vector], dim=-1)

        modeled_passage, _ = self._modeling_layer(final_merged_passage)
        modeled_passage = modeled_passage * passage_lstm_mask.unsqueeze(-1).float()
        modeling_dim = modeled_passage.size(-1)

        span_start_input = torch.cat([final_merged_passage, modeled_passage], dim=-1)
        span_start_logits = self._span_start_predictor(span_start_input).squeeze(-1)
        span_start_probs = masked_softmax(span_start_logits, passage_mask.float())

        span_start_representation = weighted_sum(modeled_passage, span_start_probs)
        tiled_start_representation = span_start_representation.unsqueeze(1).expand(
            batch_size, passage_length, modeling_dim)
        span_end_representation = torch.cat([
            final_merged_passage, modeled_passage, tiled_start_representation,
            modeled_passage * tiled_start_representation], dim=-1)
        encoded_span_end, _ = self._span_end_encoder(span_end_representation)
        encoded_span_end = encoded_span_end * passage_lstm_mask.unsqueeze(-1).float()
        span_end_input = torch.cat([final_merged_passage, encoded_span_end], dim=-1)
        span_end_logits = self._span_end_predictor(span_end_input).squeeze(-1)
        span_end_probs = masked_softmax(span_end_logits, passage_mask.float())

        span_start_logits = replace_masked_values(span_start_logits, passage_mask, -1e7)
        span_end_logits = replace_masked_values(span_end_logits, passage_mask, -1e7)
        best_span = get_best_span(span_start_logits, span_end_logits)

        output_dict = {
            "passage_question_attention": passage_question_attention,
            "span_start_logits": span_start_logits,
            "span_start_probs": span_start_probs,
            "span_end_logits": span_end_logits,
            "span_end_probs": span_end_probs,
            "best_span": best_span,
        }
        if span_start is not None:
            loss = F.nll_loss(F.log_softmax(replace_masked_values(span_start_logits, passage_mask, -1e32),
                                            dim=-1), span_start.squeeze(-1))
            loss = loss + F.nll_loss(F.log_softmax(replace_masked_values(span_end_logits, passage_mask,
                                                                         -1e32), dim=-1),
                                     span_end.squeeze(-1))
            output_dict["loss"] = loss
        return output_dict


torch.manual_seed(0)
model = BidirectionalAttentionFlow().eval()
check_gradients = True


def _field(g, batch, words, lengths, chars):
    ids = torch.randint(1, 50, (batch, words), generator=g)
    char_ids = torch.randint(1, 30, (batch, words, chars), generator=g)
    word_mask = torch.arange(words)[None, :] < torch.tensor(lengths)[:, None]
    ids = ids * word_mask
    char_ids = char_ids * word_mask[..., None]
    char_ids[..., chars - 1] = 0  # every word is shorter than the longest
    return {"tokens": {"tokens": ids}, "token_characters": {"token_characters": char_ids}}


def example_inputs():
    g = torch.Generator().manual_seed(1)
    question = _field(g, 2, 5, [5, 3], 6)
    passage = _field(g, 2, 9, [9, 7], 6)
    return question, passage


def example_kwargs():
    return {"span_start": torch.tensor([[1], [2]]), "span_end": torch.tensor([[4], [5]])}
