"""LXMERT (a language encoder, an object-relationship encoder over
detected regions' features and boxes, and cross-modality layers attending
both ways) for visual question answering."""
import torch
from transformers import LxmertConfig, LxmertForQuestionAnswering

from _examples import frozen, texts

config = LxmertConfig(vocab_size=128, hidden_size=32, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64, l_layers=2, x_layers=2,
                      r_layers=1, visual_feat_dim=16, visual_pos_dim=4, num_qa_labels=6,
                      pad_token_id=0)
model = frozen(LxmertForQuestionAnswering, config)


def example_kwargs():
    """Two questions, the second padded, and for each image 6 detected
    regions' pooled features and boxes (x0, y0, x1, y1, normalized) with
    the regions' attention mask (the second image has 4)."""
    kwargs = texts(config, token_type_ids=True)
    batch = kwargs["input_ids"].shape[0]
    torch.manual_seed(2)
    kwargs["visual_feats"] = torch.randn(batch, 6, config.visual_feat_dim)
    corner = torch.rand(batch, 6, 2) * 0.6
    kwargs["visual_pos"] = torch.cat([corner, corner + 0.3], dim=-1)
    visual_mask = torch.ones(batch, 6)
    visual_mask[-1, 4:] = 0
    kwargs["visual_attention_mask"] = visual_mask
    return kwargs
