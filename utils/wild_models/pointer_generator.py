"""A pointer-generator summariser with coverage as See et al.'s PyTorch
ports write it: a config object of flags read everywhere (`config.
is_coverage`, `config.pointer_gen`), a packed bidirectional LSTM encoder
(`pack_padded_sequence` on lengths sorted descending, `pad_packed_sequence`,
`.contiguous()`), the encoder's two directions reduced to the decoder state
by a ReduceState module, Bahdanau attention with the coverage vector as an
extra feature, attention renormalised over the padding mask, coverage
accumulated, a generation probability p_gen from the context, state and
input, the vocabulary distribution extended by a zeros block for
in-article OOV words and the copy distribution added with `scatter_add`,
teacher forcing over the target in a Python loop, the gold word's
probability by `gather`, the coverage loss `sum(min(attn, coverage))`, and
per-step losses stacked, masked and averaged over the target lengths."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class config:
    emb_dim = 12
    hidden_dim = 10
    vocab_size = 40
    pointer_gen = True
    is_coverage = True
    cov_loss_wt = 1.0
    eps = 1e-12


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(config.vocab_size, config.emb_dim)
        self.lstm = nn.LSTM(config.emb_dim, config.hidden_dim, num_layers=1, batch_first=True,
                            bidirectional=True)
        self.W_h = nn.Linear(config.hidden_dim * 2, config.hidden_dim * 2, bias=False)

    def forward(self, input, seq_lens):
        embedded = self.embedding(input)
        packed = pack_padded_sequence(embedded, seq_lens, batch_first=True)
        output, hidden = self.lstm(packed)
        encoder_outputs, _ = pad_packed_sequence(output, batch_first=True)
        encoder_outputs = encoder_outputs.contiguous()
        encoder_feature = encoder_outputs.view(-1, 2 * config.hidden_dim)
        encoder_feature = self.W_h(encoder_feature)
        return encoder_outputs, encoder_feature, hidden


class ReduceState(nn.Module):
    def __init__(self):
        super().__init__()
        self.reduce_h = nn.Linear(config.hidden_dim * 2, config.hidden_dim)
        self.reduce_c = nn.Linear(config.hidden_dim * 2, config.hidden_dim)

    def forward(self, hidden):
        h, c = hidden
        h_in = h.transpose(0, 1).contiguous().view(-1, config.hidden_dim * 2)
        hidden_reduced_h = F.relu(self.reduce_h(h_in))
        c_in = c.transpose(0, 1).contiguous().view(-1, config.hidden_dim * 2)
        hidden_reduced_c = F.relu(self.reduce_c(c_in))
        return hidden_reduced_h.unsqueeze(0), hidden_reduced_c.unsqueeze(0)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        if config.is_coverage:
            self.W_c = nn.Linear(1, config.hidden_dim * 2, bias=False)
        self.decode_proj = nn.Linear(config.hidden_dim * 2, config.hidden_dim * 2)
        self.v = nn.Linear(config.hidden_dim * 2, 1, bias=False)

    def forward(self, s_t_hat, encoder_outputs, encoder_feature, enc_padding_mask, coverage):
        b, t_k, n = list(encoder_outputs.size())
        dec_fea = self.decode_proj(s_t_hat)
        dec_fea_expanded = dec_fea.unsqueeze(1).expand(b, t_k, n).contiguous()
        dec_fea_expanded = dec_fea_expanded.view(-1, n)
        att_features = encoder_feature + dec_fea_expanded
        if config.is_coverage:
            coverage_input = coverage.view(-1, 1)
            att_features = att_features + self.W_c(coverage_input)
        e = torch.tanh(att_features)
        scores = self.v(e).view(-1, t_k)
        attn_dist_ = F.softmax(scores, dim=1) * enc_padding_mask
        normalization_factor = attn_dist_.sum(1, keepdim=True)
        attn_dist = attn_dist_ / normalization_factor
        attn_dist = attn_dist.unsqueeze(1)
        c_t = torch.bmm(attn_dist, encoder_outputs).view(-1, config.hidden_dim * 2)
        attn_dist = attn_dist.view(-1, t_k)
        if config.is_coverage:
            coverage = coverage.view(-1, t_k)
            coverage = coverage + attn_dist
        return c_t, attn_dist, coverage


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_network = Attention()
        self.embedding = nn.Embedding(config.vocab_size, config.emb_dim)
        self.x_context = nn.Linear(config.hidden_dim * 2 + config.emb_dim, config.emb_dim)
        self.lstm = nn.LSTM(config.emb_dim, config.hidden_dim, num_layers=1, batch_first=True)
        if config.pointer_gen:
            self.p_gen_linear = nn.Linear(config.hidden_dim * 4 + config.emb_dim, 1)
        self.out1 = nn.Linear(config.hidden_dim * 3, config.hidden_dim)
        self.out2 = nn.Linear(config.hidden_dim, config.vocab_size)

    def forward(self, y_t_1, s_t_1, encoder_outputs, encoder_feature, enc_padding_mask, c_t_1,
                extra_zeros, enc_batch_extend_vocab, coverage):
        y_t_1_embd = self.embedding(y_t_1)
        x = self.x_context(torch.cat((c_t_1, y_t_1_embd), 1))
        lstm_out, s_t = self.lstm(x.unsqueeze(1), s_t_1)
        h_decoder, c_decoder = s_t
        s_t_hat = torch.cat((h_decoder.view(-1, config.hidden_dim),
                             c_decoder.view(-1, config.hidden_dim)), 1)
        c_t, attn_dist, coverage_next = self.attention_network(
            s_t_hat, encoder_outputs, encoder_feature, enc_padding_mask, coverage)
        p_gen = None
        if config.pointer_gen:
            p_gen_input = torch.cat((c_t, s_t_hat, x), 1)
            p_gen = torch.sigmoid(self.p_gen_linear(p_gen_input))
        output = torch.cat((lstm_out.view(-1, config.hidden_dim), c_t), 1)
        output = self.out2(self.out1(output))
        vocab_dist = F.softmax(output, dim=1)
        if config.pointer_gen:
            vocab_dist_ = p_gen * vocab_dist
            attn_dist_ = (1 - p_gen) * attn_dist
            if extra_zeros is not None:
                vocab_dist_ = torch.cat([vocab_dist_, extra_zeros], 1)
            final_dist = vocab_dist_.scatter_add(1, enc_batch_extend_vocab, attn_dist_)
        else:
            final_dist = vocab_dist
        return final_dist, s_t, c_t, attn_dist, p_gen, coverage_next


class PointerGeneratorModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()
        self.reduce_state = ReduceState()
        # the decoder shares the encoder's embedding
        self.decoder.embedding.weight = self.encoder.embedding.weight

    def forward(self, enc_batch, enc_lens, enc_batch_extend_vocab, max_art_oovs, dec_batch,
                target_batch, dec_lens):
        batch_size, max_dec_len = dec_batch.size()
        enc_padding_mask = (enc_batch != 0).float()
        extra_zeros = None
        if max_art_oovs > 0:
            extra_zeros = torch.zeros((batch_size, max_art_oovs))
        c_t_1 = torch.zeros((batch_size, 2 * config.hidden_dim))
        coverage = torch.zeros(enc_batch.size()) if config.is_coverage else None
        dec_padding_mask = (torch.arange(max_dec_len)[None, :] < dec_lens[:, None]).float()

        encoder_outputs, encoder_feature, encoder_hidden = self.encoder(enc_batch, enc_lens)
        s_t_1 = self.reduce_state(encoder_hidden)

        step_losses = []
        attn_dists = []
        for di in range(min(max_dec_len, 100)):
            y_t_1 = dec_batch[:, di]
            final_dist, s_t_1, c_t_1, attn_dist, p_gen, next_coverage = self.decoder(
                y_t_1, s_t_1, encoder_outputs, encoder_feature, enc_padding_mask, c_t_1,
                extra_zeros, enc_batch_extend_vocab, coverage)
            target = target_batch[:, di]
            gold_probs = torch.gather(final_dist, 1, target.unsqueeze(1)).squeeze()
            step_loss = -torch.log(gold_probs + config.eps)
            if config.is_coverage:
                step_coverage_loss = torch.sum(torch.min(attn_dist, coverage), 1)
                step_loss = step_loss + config.cov_loss_wt * step_coverage_loss
                coverage = next_coverage
            step_mask = dec_padding_mask[:, di]
            step_losses.append(step_loss * step_mask)
            attn_dists.append(attn_dist)
        sum_losses = torch.sum(torch.stack(step_losses, 1), 1)
        batch_avg_loss = sum_losses / dec_lens.float()
        loss = torch.mean(batch_avg_loss)
        return loss, torch.stack(attn_dists, 1), coverage


torch.manual_seed(0)
model = PointerGeneratorModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    enc_lens = torch.tensor([8, 6, 5])
    enc_mask = torch.arange(8)[None, :] < enc_lens[:, None]
    enc_batch = torch.randint(1, config.vocab_size, (3, 8), generator=g) * enc_mask
    # two article words are out of the vocabulary: ids past vocab_size in the extended batch
    enc_batch_extend_vocab = enc_batch.clone()
    enc_batch_extend_vocab[0, 2] = config.vocab_size
    enc_batch_extend_vocab[1, 4] = config.vocab_size + 1
    enc_batch[0, 2] = 1
    enc_batch[1, 4] = 1
    dec_lens = torch.tensor([5, 4, 3])
    dec_mask = torch.arange(5)[None, :] < dec_lens[:, None]
    dec_batch = torch.randint(1, config.vocab_size, (3, 5), generator=g) * dec_mask
    target_batch = torch.randint(1, config.vocab_size + 2, (3, 5), generator=g) * dec_mask
    return enc_batch, enc_lens, enc_batch_extend_vocab, 2, dec_batch, target_batch, dec_lens
