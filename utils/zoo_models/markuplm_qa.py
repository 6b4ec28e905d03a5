"""MarkupLM (text tokens with each node's XPath: tag and subscript ids per
depth, embedded and summed) for question answering over a web page."""
import torch
from transformers import MarkupLMConfig, MarkupLMForQuestionAnswering

from _examples import frozen, texts

config = MarkupLMConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                        max_xpath_tag_unit_embeddings=16, max_xpath_subs_unit_embeddings=32,
                        xpath_unit_hidden_size=8, max_depth=6, tag_pad_id=15, subs_pad_id=31,
                        pad_token_id=1)
model = frozen(MarkupLMForQuestionAnswering, config)


def example_kwargs():
    """What the processor gives for two questions over a web page: the
    tokens, the attention mask and each token's XPath as tag ids and
    subscripts per depth (padded past each node's depth)."""
    kwargs = texts(config, token_type_ids=True)
    batch, length = kwargs["input_ids"].shape
    torch.manual_seed(3)
    tags = torch.randint(0, 15, (batch, length, config.max_depth))
    subs = torch.randint(0, 31, (batch, length, config.max_depth))
    depth = torch.randint(1, config.max_depth, (batch, length, 1))
    beyond = torch.arange(config.max_depth) >= depth
    kwargs["xpath_tags_seq"] = tags.masked_fill(beyond, config.tag_pad_id)
    kwargs["xpath_subs_seq"] = subs.masked_fill(beyond, config.subs_pad_id)
    return kwargs
