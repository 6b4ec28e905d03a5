"""A GRU encoder-decoder with Bahdanau attention and greedy decoding, as
the classic PyTorch seq2seq tutorial writes it: an embedding and GRU
encoder, a decoder loop over a fixed number of steps whose next input is
the previous step's argmax (topk(1) then detach), additive attention
scores over the encoder outputs, and per-step log-softmax outputs
concatenated."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SOS_token = 0


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)

    def forward(self, input):
        output, hidden = self.gru(self.embedding(input))
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys), weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, max_length=6):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.max_length = max_length

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.embedding(input)
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
        return self.out(output), hidden, attn_weights

    def forward(self, encoder_outputs, encoder_hidden):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(self.max_length):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            _, topi = decoder_output.topk(1)
            decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = F.log_softmax(torch.cat(decoder_outputs, dim=1), dim=-1)
        return decoder_outputs, decoder_hidden, torch.cat(attentions, dim=1)


class Seq2Seq(nn.Module):
    def __init__(self, vocab=20, hidden=16):
        super().__init__()
        self.encoder = EncoderRNN(vocab, hidden)
        self.decoder = AttnDecoderRNN(hidden, vocab)

    def forward(self, src):
        encoder_outputs, encoder_hidden = self.encoder(src)
        return self.decoder(encoder_outputs, encoder_hidden)


torch.manual_seed(0)
model = Seq2Seq().eval()


def example_inputs():
    return (torch.randint(1, 20, (3, 7), generator=torch.Generator().manual_seed(1)),)
