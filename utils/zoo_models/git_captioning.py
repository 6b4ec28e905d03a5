"""GIT (generative image-to-text: CLIP-style image tokens prepended to the
text, one decoder attending to the image bidirectionally and to the text
causally) for image captioning."""
from transformers import GitConfig, GitForCausalLM

from _examples import frozen, images, texts

config = GitConfig(vision_config={"hidden_size": 32, "intermediate_size": 64,
                                  "num_hidden_layers": 2, "num_attention_heads": 2,
                                  "image_size": 32, "patch_size": 8},
                   vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                   intermediate_size=64, max_position_embeddings=64, pad_token_id=0,
                   bos_token_id=1, eos_token_id=2)
model = frozen(GitForCausalLM, config)


def example_kwargs():
    """Two images and the caption tokens so far, the second padded; no
    key/value cache, as for an export."""
    kwargs = texts(config, use_cache=False)
    kwargs.update(images(32))
    return kwargs
