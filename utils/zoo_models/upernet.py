"""UperNet (ConvNeXt backbone, pyramid pooling and feature pyramid decoder, auxiliary FCN head) for semantic segmentation."""
from transformers import ConvNextConfig, UperNetConfig, UperNetForSemanticSegmentation

from _examples import frozen, images

backbone = ConvNextConfig(hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1],
                          out_features=["stage1", "stage2", "stage3", "stage4"])
config = UperNetConfig(backbone_config=backbone, hidden_size=32, pool_scales=[1, 2, 3, 6],
                       auxiliary_channels=16, auxiliary_in_channels=48, num_labels=5)
model = frozen(UperNetForSemanticSegmentation, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(64)
