"""FastSpeech 2 variance adaptor at inference as ming024's implementation
writes it: a VariancePredictor (Conv1d over transposed features, ReLU,
LayerNorm, dropout, a masked_fill of padded frames with 0), durations
from `torch.clamp(torch.round(torch.exp(log_d) - 1) * d_control, min=0)`,
pitch and energy quantised by `torch.bucketize` into a bins Parameter
built from `torch.exp(torch.linspace(log(min), log(max), n - 1))`
(requires_grad=False) and embedded, and the LengthRegulator expanding
each item by a Python loop over the batch and its phonemes,
`vec.expand(max(int(expand_size), 0), -1)` for each `.item()` duration,
`torch.cat`, and a `pad` helper padding a list of variable-length
matrices to the longest with `F.pad`; mel lengths as a LongTensor of
Python ints and a `get_mask_from_lengths` by arange comparison; the
encoder and decoder FFT blocks with a numpy sinusoid table as a frozen
Parameter, hand-written multi-head attention by bmm with a -inf
masked_fill, and Conv1d position-wise feed-forward layers."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from collections import OrderedDict


def get_mask_from_lengths(lengths, max_len=None):
    batch_size = lengths.shape[0]
    if max_len is None:
        max_len = torch.max(lengths).item()
    ids = torch.arange(0, max_len).unsqueeze(0).expand(batch_size, -1).to(lengths.device)
    mask = ids >= lengths.unsqueeze(1).expand(-1, max_len)
    return mask


def pad(input_ele, mel_max_length=None):
    if mel_max_length:
        max_len = mel_max_length
    else:
        max_len = max([input_ele[i].size(0) for i in range(len(input_ele))])

    out_list = list()
    for i, batch in enumerate(input_ele):
        if len(batch.shape) == 1:
            one_batch_padded = F.pad(batch, (0, max_len - batch.size(0)), "constant", 0.0)
        elif len(batch.shape) == 2:
            one_batch_padded = F.pad(batch, (0, 0, 0, max_len - batch.size(0)), "constant", 0.0)
        out_list.append(one_batch_padded)
    out_padded = torch.stack(out_list)
    return out_padded


class Conv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, padding=0):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=kernel_size, padding=padding)

    def forward(self, x):
        x = x.contiguous().transpose(1, 2)
        x = self.conv(x)
        x = x.contiguous().transpose(1, 2)
        return x


class VariancePredictor(nn.Module):
    def __init__(self, input_size=32, filter_size=32, kernel=3, dropout=0.5):
        super().__init__()
        self.conv_layer = nn.Sequential(OrderedDict([
            ("conv1d_1", Conv(input_size, filter_size, kernel_size=kernel, padding=(kernel - 1) // 2)),
            ("relu_1", nn.ReLU()),
            ("layer_norm_1", nn.LayerNorm(filter_size)),
            ("dropout_1", nn.Dropout(dropout)),
            ("conv1d_2", Conv(filter_size, filter_size, kernel_size=kernel, padding=1)),
            ("relu_2", nn.ReLU()),
            ("layer_norm_2", nn.LayerNorm(filter_size)),
            ("dropout_2", nn.Dropout(dropout)),
        ]))
        self.linear_layer = nn.Linear(filter_size, 1)

    def forward(self, encoder_output, mask):
        out = self.conv_layer(encoder_output)
        out = self.linear_layer(out)
        out = out.squeeze(-1)
        if mask is not None:
            out = out.masked_fill(mask, 0.0)
        return out


class LengthRegulator(nn.Module):
    def LR(self, x, duration, max_len):
        output = list()
        mel_len = list()
        for batch, expand_target in zip(x, duration):
            expanded = self.expand(batch, expand_target)
            output.append(expanded)
            mel_len.append(expanded.shape[0])

        if max_len is not None:
            output = pad(output, max_len)
        else:
            output = pad(output)
        return output, torch.LongTensor(mel_len).to(x.device)

    def expand(self, batch, predicted):
        out = list()
        for i, vec in enumerate(batch):
            expand_size = predicted[i].item()
            out.append(vec.expand(max(int(expand_size), 0), -1))
        out = torch.cat(out, 0)
        return out

    def forward(self, x, duration, max_len):
        output, mel_len = self.LR(x, duration, max_len)
        return output, mel_len


class VarianceAdaptor(nn.Module):
    def __init__(self, hidden=32, n_bins=16, pitch_range=(-2.0, 3.0), energy_range=(0.1, 4.0)):
        super().__init__()
        self.duration_predictor = VariancePredictor(hidden, hidden)
        self.length_regulator = LengthRegulator()
        self.pitch_predictor = VariancePredictor(hidden, hidden)
        self.energy_predictor = VariancePredictor(hidden, hidden)
        pitch_min, pitch_max = pitch_range
        energy_min, energy_max = energy_range
        self.pitch_bins = nn.Parameter(torch.linspace(pitch_min, pitch_max, n_bins - 1), requires_grad=False)
        self.energy_bins = nn.Parameter(
            torch.exp(torch.linspace(np.log(energy_min), np.log(energy_max), n_bins - 1)), requires_grad=False)
        self.pitch_embedding = nn.Embedding(n_bins, hidden)
        self.energy_embedding = nn.Embedding(n_bins, hidden)

    def get_pitch_embedding(self, x, target, mask, control):
        prediction = self.pitch_predictor(x, mask)
        if target is not None:
            embedding = self.pitch_embedding(torch.bucketize(target, self.pitch_bins))
        else:
            prediction = prediction * control
            embedding = self.pitch_embedding(torch.bucketize(prediction, self.pitch_bins))
        return prediction, embedding

    def get_energy_embedding(self, x, target, mask, control):
        prediction = self.energy_predictor(x, mask)
        if target is not None:
            embedding = self.energy_embedding(torch.bucketize(target, self.energy_bins))
        else:
            prediction = prediction * control
            embedding = self.energy_embedding(torch.bucketize(prediction, self.energy_bins))
        return prediction, embedding

    def forward(self, x, src_mask, mel_mask=None, max_len=None, pitch_target=None, energy_target=None,
                duration_target=None, p_control=1.0, e_control=1.0, d_control=1.0):
        log_duration_prediction = self.duration_predictor(x, src_mask)
        pitch_prediction, pitch_embedding = self.get_pitch_embedding(x, pitch_target, src_mask, p_control)
        x = x + pitch_embedding
        energy_prediction, energy_embedding = self.get_energy_embedding(x, energy_target, src_mask, e_control)
        x = x + energy_embedding

        if duration_target is not None:
            x, mel_len = self.length_regulator(x, duration_target, max_len)
            duration_rounded = duration_target
        else:
            duration_rounded = torch.clamp((torch.round(torch.exp(log_duration_prediction) - 1) * d_control), min=0)
            x, mel_len = self.length_regulator(x, duration_rounded, max_len)
            mel_mask = get_mask_from_lengths(mel_len)

        return x, pitch_prediction, energy_prediction, log_duration_prediction, duration_rounded, mel_len, mel_mask


def get_sinusoid_encoding_table(n_position, d_hid, padding_idx=None):
    def cal_angle(position, hid_idx):
        return position / np.power(10000, 2 * (hid_idx // 2) / d_hid)

    def get_posi_angle_vec(position):
        return [cal_angle(position, hid_j) for hid_j in range(d_hid)]

    sinusoid_table = np.array([get_posi_angle_vec(pos_i) for pos_i in range(n_position)])
    sinusoid_table[:, 0::2] = np.sin(sinusoid_table[:, 0::2])
    sinusoid_table[:, 1::2] = np.cos(sinusoid_table[:, 1::2])
    if padding_idx is not None:
        sinusoid_table[padding_idx] = 0.0
    return torch.FloatTensor(sinusoid_table)


class MultiHeadAttention(nn.Module):
    def __init__(self, n_head, d_model, d_k, d_v, dropout=0.1):
        super().__init__()
        self.n_head, self.d_k, self.d_v = n_head, d_k, d_v
        self.w_qs = nn.Linear(d_model, n_head * d_k)
        self.w_ks = nn.Linear(d_model, n_head * d_k)
        self.w_vs = nn.Linear(d_model, n_head * d_v)
        self.temperature = np.power(d_k, 0.5)
        self.layer_norm = nn.LayerNorm(d_model)
        self.fc = nn.Linear(n_head * d_v, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, q, k, v, mask=None):
        d_k, d_v, n_head = self.d_k, self.d_v, self.n_head
        sz_b, len_q, _ = q.size()
        sz_b, len_k, _ = k.size()
        sz_b, len_v, _ = v.size()
        residual = q
        q = self.w_qs(q).view(sz_b, len_q, n_head, d_k)
        k = self.w_ks(k).view(sz_b, len_k, n_head, d_k)
        v = self.w_vs(v).view(sz_b, len_v, n_head, d_v)
        q = q.permute(2, 0, 1, 3).contiguous().view(-1, len_q, d_k)
        k = k.permute(2, 0, 1, 3).contiguous().view(-1, len_k, d_k)
        v = v.permute(2, 0, 1, 3).contiguous().view(-1, len_v, d_v)
        mask = mask.repeat(n_head, 1, 1)
        attn = torch.bmm(q, k.transpose(1, 2)) / self.temperature
        attn = attn.masked_fill(mask, -np.inf)
        attn = torch.softmax(attn, dim=2)
        output = torch.bmm(attn, v)
        output = output.view(n_head, sz_b, len_q, d_v)
        output = output.permute(1, 2, 0, 3).contiguous().view(sz_b, len_q, -1)
        output = self.dropout(self.fc(output))
        return self.layer_norm(output + residual), attn


class FFTBlock(nn.Module):
    def __init__(self, d_model, n_head, d_inner, kernel_size=(9, 1), dropout=0.1):
        super().__init__()
        self.slf_attn = MultiHeadAttention(n_head, d_model, d_model // n_head, d_model // n_head, dropout)
        self.w_1 = nn.Conv1d(d_model, d_inner, kernel_size[0], padding=(kernel_size[0] - 1) // 2)
        self.w_2 = nn.Conv1d(d_inner, d_model, kernel_size[1], padding=(kernel_size[1] - 1) // 2)
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, enc_input, mask=None, slf_attn_mask=None):
        enc_output, enc_slf_attn = self.slf_attn(enc_input, enc_input, enc_input, mask=slf_attn_mask)
        enc_output = enc_output.masked_fill(mask.unsqueeze(-1), 0)
        residual = enc_output
        output = self.w_2(F.relu(self.w_1(enc_output.transpose(1, 2)))).transpose(1, 2)
        enc_output = self.layer_norm(output + residual)
        enc_output = enc_output.masked_fill(mask.unsqueeze(-1), 0)
        return enc_output, enc_slf_attn


class FastSpeech2Lite(nn.Module):
    def __init__(self, vocab=20, hidden=32, n_mels=10, max_seq_len=64):
        super().__init__()
        self.src_word_emb = nn.Embedding(vocab, hidden, padding_idx=0)
        self.position_enc = nn.Parameter(get_sinusoid_encoding_table(max_seq_len + 1, hidden).unsqueeze(0),
                                         requires_grad=False)
        self.encoder_layers = nn.ModuleList([FFTBlock(hidden, 2, 64) for _ in range(2)])
        self.variance_adaptor = VarianceAdaptor(hidden)
        self.decoder_layers = nn.ModuleList([FFTBlock(hidden, 2, 64)])
        self.mel_linear = nn.Linear(hidden, n_mels)

    def forward(self, texts, src_lens, d_control: float = 1.0):
        batch_size, max_len = texts.shape[0], texts.shape[1]
        src_masks = get_mask_from_lengths(src_lens, max_len)
        slf_attn_mask = src_masks.unsqueeze(1).expand(-1, max_len, -1)
        output = self.src_word_emb(texts) + self.position_enc[:, :max_len, :].expand(batch_size, -1, -1)
        for enc_layer in self.encoder_layers:
            output, _ = enc_layer(output, mask=src_masks, slf_attn_mask=slf_attn_mask)
        (output, p_predictions, e_predictions, log_d_predictions, d_rounded, mel_lens, mel_masks) = \
            self.variance_adaptor(output, src_masks, d_control=d_control)
        mel_len = output.shape[1]
        dec_attn_mask = mel_masks.unsqueeze(1).expand(-1, mel_len, -1)
        output = output + self.position_enc[:, :mel_len, :].expand(batch_size, -1, -1)
        for dec_layer in self.decoder_layers:
            output, _ = dec_layer(output, mask=mel_masks, slf_attn_mask=dec_attn_mask)
        output = self.mel_linear(output)
        return output, p_predictions, e_predictions, log_d_predictions, d_rounded, mel_lens, mel_masks


torch.manual_seed(0)
model = FastSpeech2Lite().eval()
with torch.no_grad():
    # durations around 2-4 frames, as a trained duration predictor gives
    model.variance_adaptor.duration_predictor.linear_layer.bias.fill_(1.2)


def example_inputs():
    texts = torch.tensor([[3, 7, 9, 2, 5, 11], [4, 8, 12, 6, 0, 0]])
    return texts, torch.tensor([6, 4]), 1.0
