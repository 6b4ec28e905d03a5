"""Prototypical Networks as easyfsl's FewShotClassifier writes them: a
Conv-4 backbone (conv, BatchNorm, ReLU, max-pool blocks built by a helper),
`process_support_set` storing the support features and prototypes on the
module, `compute_prototypes` counting the ways by
`len(torch.unique(support_labels))` and averaging
`support_features[torch.nonzero(support_labels == label)]` per label,
scores as negated `torch.cdist`, and the episode's loss and accuracy
(`(scores.argmax(-1) == query_labels).float().mean()`); the support
labels are unsorted, as a sampler gives them."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_block(in_channels, out_channels):
    return nn.Sequential(nn.Conv2d(in_channels, out_channels, 3, padding=1),
                         nn.BatchNorm2d(out_channels), nn.ReLU(), nn.MaxPool2d(2))


def compute_prototypes(support_features, support_labels):
    n_way = len(torch.unique(support_labels))
    return torch.cat([support_features[torch.nonzero(support_labels == label)].mean(0)
                      for label in range(n_way)])


class PrototypicalNetworks(nn.Module):
    def __init__(self, hidden=16, use_softmax=False):
        super().__init__()
        self.backbone = nn.Sequential(conv_block(3, hidden), conv_block(hidden, hidden),
                                      conv_block(hidden, hidden), nn.Flatten())
        self.use_softmax = use_softmax
        self.prototypes = torch.tensor(())
        self.support_features = torch.tensor(())
        self.support_labels = torch.tensor(())

    def compute_features(self, images):
        return self.backbone(images)

    def process_support_set(self, support_images, support_labels):
        self.support_labels = support_labels
        self.support_features = self.compute_features(support_images)
        self.prototypes = compute_prototypes(self.support_features, support_labels)

    def l2_distance_to_prototypes(self, samples):
        return -torch.cdist(samples, self.prototypes)

    def softmax_if_specified(self, output, temperature=1.0):
        return (temperature * output).softmax(-1) if self.use_softmax else output

    def forward(self, support_images, support_labels, query_images, query_labels):
        self.process_support_set(support_images, support_labels)
        query_features = self.compute_features(query_images)
        scores = self.softmax_if_specified(self.l2_distance_to_prototypes(query_features))
        loss = F.cross_entropy(scores, query_labels)
        accuracy = (scores.argmax(-1) == query_labels).float().mean()
        return loss, scores, accuracy


torch.manual_seed(0)
model = PrototypicalNetworks().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    support_labels = torch.tensor([2, 0, 1, 2, 1, 0, 1, 2, 0])
    query_labels = torch.tensor([0, 1, 2, 2, 0, 1])
    return (torch.randn(9, 3, 16, 16, generator=g), support_labels,
            torch.randn(6, 3, 16, 16, generator=g), query_labels)
