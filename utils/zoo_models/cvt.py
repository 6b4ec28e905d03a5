"""CvT (convolutional token embeddings and projections) with an image-classification head."""
from transformers import CvtConfig, CvtForImageClassification

from _examples import frozen, images

config = CvtConfig(embed_dim=[16, 32], num_heads=[1, 2], depth=[1, 2], patch_sizes=[7, 3],
                   patch_stride=[4, 2], patch_padding=[2, 1], mlp_ratio=[2.0, 2.0],
                   attention_drop_rate=[0.0, 0.0], drop_rate=[0.0, 0.0], drop_path_rate=[0.0, 0.0],
                   qkv_bias=[True, True], cls_token=[False, True], qkv_projection_method=["dw_bn", "dw_bn"],
                   kernel_qkv=[3, 3], padding_kv=[1, 1], stride_kv=[2, 2], padding_q=[1, 1],
                   stride_q=[1, 1], num_labels=5)
model = frozen(CvtForImageClassification, config)


def example_kwargs():
    """Two images as the image processor gives them."""
    return images(32)
