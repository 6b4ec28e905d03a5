"""PatchCore anomaly detection as anomalib writes its torch model, in plain
torch: a small ResNet backbone whose layer2/layer3 outputs are captured by
forward hooks registered in `__init__` that write into a dict on the
module (timm's FeatureHooks style), local neighbourhood aggregation by
`AvgPool2d(3, 1, 1)`, layer3 resized to layer2's size by bilinear
`F.interpolate` and concatenated, patches by `permute(0, 2, 3,
1).reshape(-1, C)`, a coreset memory bank buffer chosen in `__init__` by
greedy k-center selection over embeddings of training images, nearest
neighbours by `torch.cdist` and `topk(largest=False)`, the image score
reweighted from the memory bank's support samples (`memory_bank[nn_index,
:]`, a second cdist/topk, `1 - softmax`), and the anomaly map upsampled
to the image and blurred by a Gaussian kernel built in `__init__` applied
by `F.conv2d` after reflect padding."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + identity)


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.layer1 = BasicBlock(16, 16, 1)
        self.layer2 = BasicBlock(16, 24, 2)
        self.layer3 = BasicBlock(24, 32, 2)

    def forward(self, x):
        return self.layer3(self.layer2(self.layer1(self.stem(x))))


class FeatureExtractor(nn.Module):
    def __init__(self, backbone, layers):
        super().__init__()
        self.backbone = backbone
        self.layers = layers
        self._features = {layer: torch.empty(0) for layer in layers}
        for layer_id in layers:
            getattr(self.backbone, layer_id).register_forward_hook(self.get_features(layer_id))

    def get_features(self, layer_id):
        def hook(_, __, output):
            self._features[layer_id] = output
        return hook

    def forward(self, inputs):
        self._features = {layer: torch.empty(0) for layer in self.layers}
        _ = self.backbone(inputs)
        return self._features


class KCenterGreedy:
    def __init__(self, embedding, sampling_ratio):
        self.embedding = embedding
        self.coreset_size = int(embedding.shape[0] * sampling_ratio)

    def select_coreset(self):
        selected = [0]
        min_distances = torch.linalg.norm(self.embedding - self.embedding[0:1], dim=1, keepdim=True)
        for _ in range(self.coreset_size - 1):
            idx = int(torch.argmax(min_distances).item())
            selected.append(idx)
            distance = torch.linalg.norm(self.embedding - self.embedding[idx:idx + 1], dim=1, keepdim=True)
            min_distances = torch.minimum(min_distances, distance)
        return self.embedding[selected]


class GaussianBlur2d(nn.Module):
    def __init__(self, sigma=4.0, channels=1):
        super().__init__()
        kernel_size = 2 * int(4.0 * sigma + 0.5) + 1
        x = torch.arange(kernel_size, dtype=torch.float32) - kernel_size // 2
        gauss = torch.exp(-(x ** 2) / (2 * sigma ** 2))
        gauss = gauss / gauss.sum()
        kernel = torch.outer(gauss, gauss)
        self.register_buffer("kernel", kernel.expand(channels, 1, kernel_size, kernel_size).contiguous())
        self.padding = kernel_size // 2
        self.channels = channels

    def forward(self, x):
        x = F.pad(x, [self.padding] * 4, mode="reflect")
        return F.conv2d(x, self.kernel, groups=self.channels)


class PatchcoreModel(nn.Module):
    def __init__(self, layers=("layer2", "layer3"), num_neighbors=3, image_size=32):
        super().__init__()
        self.layers = list(layers)
        self.num_neighbors = num_neighbors
        self.feature_extractor = FeatureExtractor(TinyResNet().eval(), self.layers)
        self.feature_pooler = nn.AvgPool2d(3, 1, 1)
        self.anomaly_map_generator = GaussianBlur2d(sigma=1.0)
        self.image_size = image_size
        with torch.no_grad():
            g = torch.Generator().manual_seed(7)
            train = torch.randn(4, 3, image_size, image_size, generator=g)
            embedding = self.reshape_embedding(self.generate_embedding(self.feature_extractor(train)))
        self.register_buffer("memory_bank", KCenterGreedy(embedding, 0.25).select_coreset())

    def generate_embedding(self, features):
        embeddings = features[self.layers[0]]
        for layer in self.layers[1:]:
            layer_embedding = F.interpolate(features[layer], size=embeddings.shape[-2:], mode="bilinear")
            embeddings = torch.cat((embeddings, layer_embedding), 1)
        return embeddings

    @staticmethod
    def reshape_embedding(embedding):
        embedding_size = embedding.size(1)
        return embedding.permute(0, 2, 3, 1).reshape(-1, embedding_size)

    def nearest_neighbors(self, embedding, n_neighbors):
        distances = torch.cdist(embedding, self.memory_bank, p=2.0)
        if n_neighbors == 1:
            patch_scores, locations = distances.min(1)
        else:
            patch_scores, locations = distances.topk(k=n_neighbors, largest=False, dim=1)
        return patch_scores, locations

    def compute_anomaly_score(self, patch_scores, locations, embedding):
        if self.num_neighbors == 1:
            return patch_scores.amax(1)
        batch_size, num_patches = patch_scores.shape
        max_patches = torch.argmax(patch_scores, dim=1)
        max_patches_features = embedding.reshape(batch_size, num_patches, -1)[torch.arange(batch_size), max_patches]
        score = patch_scores[torch.arange(batch_size), max_patches]
        nn_index = locations[torch.arange(batch_size), max_patches]
        nn_sample = self.memory_bank[nn_index, :]
        memory_bank_effective_size = self.memory_bank.shape[0]
        _, support_samples = self.nearest_neighbors(nn_sample, n_neighbors=min(self.num_neighbors,
                                                                                 memory_bank_effective_size))
        distances = torch.cdist(max_patches_features.unsqueeze(1), self.memory_bank[support_samples], p=2.0)
        weights = (1 - F.softmax(distances.squeeze(1), 1))[..., 0]
        return weights * score

    def forward(self, input_tensor):
        output_size = input_tensor.shape[-2:]
        with torch.no_grad():
            features = self.feature_extractor(input_tensor)
        features = {layer: self.feature_pooler(feature) for layer, feature in features.items()}
        embedding = self.generate_embedding(features)
        batch_size, _, width, height = embedding.shape
        embedding = self.reshape_embedding(embedding)
        patch_scores, locations = self.nearest_neighbors(embedding=embedding, n_neighbors=1)
        patch_scores = patch_scores.reshape((batch_size, -1))
        locations = locations.reshape((batch_size, -1))
        pred_score = self.compute_anomaly_score(patch_scores, locations, embedding)
        patch_scores = patch_scores.reshape((batch_size, 1, width, height))
        anomaly_map = F.interpolate(patch_scores, size=output_size)
        anomaly_map = self.anomaly_map_generator(anomaly_map)
        pred_label = pred_score > math.log(2.0)
        return {"anomaly_map": anomaly_map, "pred_score": pred_score, "pred_label": pred_label}


torch.manual_seed(0)
model = PatchcoreModel().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 32, 32, generator=g)
