"""A Kim-style CNN for sentence classification as its ports write it:
embeddings unsqueezed to one channel, Conv2d filters of several widths
spanning the embedding, squeeze(3), max_pool1d over the whole remaining
length (kernel given as x.size(2)), concatenation and dropout, and a
padding index masked by the embedding."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TextCNN(nn.Module):
    def __init__(self, vocab=50, dim=16, classes=3, kernel_num=8, kernel_sizes=(2, 3, 4)):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.convs1 = nn.ModuleList([nn.Conv2d(1, kernel_num, (K, dim)) for K in kernel_sizes])
        self.dropout = nn.Dropout(0.5)
        self.fc1 = nn.Linear(len(kernel_sizes) * kernel_num, classes)

    def forward(self, x):
        x = self.embed(x)
        x = x.unsqueeze(1)
        x = [F.relu(conv(x)).squeeze(3) for conv in self.convs1]
        x = [F.max_pool1d(i, i.size(2)).squeeze(2) for i in x]
        x = torch.cat(x, 1)
        x = self.dropout(x)
        return self.fc1(x)


torch.manual_seed(0)
model = TextCNN().eval()
check_gradients = True


def example_inputs():
    x = torch.randint(1, 50, (3, 12), generator=torch.Generator().manual_seed(1))
    x[1, 9:] = 0
    return (x,)
