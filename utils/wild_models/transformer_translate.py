"""The sequence-to-sequence translation model of the PyTorch tutorials
("Language Translation with nn.Transformer"): `nn.Transformer` with its
encoder and decoder stacks, a `TokenEmbedding` scaled by
`math.sqrt(emb_size)`, a sinusoidal `PositionalEncoding` buffer built
with `torch.exp(-torch.arange(...) * math.log(10000) / emb_size)` and
unsqueezed to a batch axis, and `create_mask` from the tutorial:
`nn.Transformer.generate_square_subsequent_mask` for the target, a bool
all-False source mask, and padding masks `(src == PAD_IDX).transpose(0,
1)`, passed as `src_key_padding_mask`, `tgt_key_padding_mask` and
`memory_key_padding_mask`. Sequences are first-axis (batch_first=False),
the loss a `CrossEntropyLoss(ignore_index=PAD_IDX)` on `tgt[1:]`."""
import math

import torch
import torch.nn as nn
from torch import Tensor
from torch.nn import Transformer

PAD_IDX = 1


class PositionalEncoding(nn.Module):
    def __init__(self, emb_size: int, dropout: float, maxlen: int = 64):
        super(PositionalEncoding, self).__init__()
        den = torch.exp(-torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(-2)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pos_embedding", pos_embedding)

    def forward(self, token_embedding: Tensor):
        return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size: int, emb_size):
        super(TokenEmbedding, self).__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.emb_size = emb_size

    def forward(self, tokens: Tensor):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


def create_mask(src, tgt):
    src_seq_len = src.shape[0]
    tgt_seq_len = tgt.shape[0]
    tgt_mask = Transformer.generate_square_subsequent_mask(tgt_seq_len, device=src.device)
    src_mask = torch.zeros((src_seq_len, src_seq_len), device=src.device).type(torch.bool)
    src_padding_mask = (src == PAD_IDX).transpose(0, 1)
    tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
    return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask


class Seq2SeqTransformer(nn.Module):
    def __init__(self, num_encoder_layers=2, num_decoder_layers=2, emb_size=32, nhead=4,
                 src_vocab_size=40, tgt_vocab_size=48, dim_feedforward=64, dropout=0.1):
        super(Seq2SeqTransformer, self).__init__()
        self.transformer = Transformer(d_model=emb_size, nhead=nhead,
                                       num_encoder_layers=num_encoder_layers,
                                       num_decoder_layers=num_decoder_layers,
                                       dim_feedforward=dim_feedforward, dropout=dropout)
        self.generator = nn.Linear(emb_size, tgt_vocab_size)
        self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
        self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
        self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)
        self.loss_fn = nn.CrossEntropyLoss(ignore_index=PAD_IDX)

    def forward(self, src: Tensor, tgt: Tensor):
        tgt_input = tgt[:-1, :]
        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
        src_emb = self.positional_encoding(self.src_tok_emb(src))
        tgt_emb = self.positional_encoding(self.tgt_tok_emb(tgt_input))
        outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                src_padding_mask, tgt_padding_mask, src_padding_mask)
        logits = self.generator(outs)
        tgt_out = tgt[1:, :]
        loss = self.loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        return logits, loss


torch.manual_seed(0)
model = Seq2SeqTransformer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    src = torch.randint(2, 40, (7, 3), generator=g)
    tgt = torch.randint(2, 48, (6, 3), generator=g)
    src[5:, 1] = PAD_IDX
    tgt[4:, 1] = PAD_IDX
    return src, tgt
