"""ViTPose (a plain ViT backbone whose MLPs route to a dataset's expert
part by `dataset_index`, and a deconvolution heatmap head) for
keypoint (pose) estimation."""
import torch
from transformers import VitPoseBackboneConfig, VitPoseConfig, VitPoseForPoseEstimation

from _examples import SIZES, frozen

backbone = VitPoseBackboneConfig(image_size=[64, 48], patch_size=[8, 8], hidden_size=32,
                                 num_hidden_layers=2, num_attention_heads=2, mlp_ratio=2,
                                 num_experts=2, part_features=8, out_indices=[2])
config = VitPoseConfig(backbone_config=backbone, num_labels=17, use_simple_decoder=False)
model = frozen(VitPoseForPoseEstimation, config)


def example_kwargs():
    """Two person crops (64 x 48, as the image processor resizes each box)
    and which dataset's keypoint expert each uses."""
    torch.manual_seed(1)
    batch = SIZES["batch"]  # other SIZES: that many crops, experts alternating
    return {"pixel_values": torch.randn(batch, 3, 64, 48),
            "dataset_index": torch.arange(batch) % 2}
