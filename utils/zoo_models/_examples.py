"""What the zoo's model files share: building a model frozen from its config,
and the example inputs its preprocessor (tokenizer, image processor, feature
extractor) would give, as the keyword arguments of the model's call."""
import torch

# The batch size and text length of the example inputs texts() and images()
# give. utils/zoo --dynamic changes them to call a model at other sizes
# than its export's; the files' own calls never pass sizes.
SIZES = {"batch": 2, "length": 8}


def frozen(model_class, config):
    """`model_class(config)` with seeded random weights, in eval mode, its
    weights frozen."""
    torch.manual_seed(0)
    return model_class(config).eval().requires_grad_(False)


def texts(config, *, token_type_ids=False, decoder_length=0, use_cache=None):
    """What a tokenizer gives for two texts of 8 tokens, the second padded
    after 5 (at other SIZES: that many texts of that length, the last
    padded after five eighths of it when there are two or more):
    `input_ids` and `attention_mask`; `token_type_ids` (all one
    segment) when asked; with `decoder_length`, the decoder's input so far
    (`decoder_input_ids`, starting with the decoder's start token); and
    `use_cache` when given (False for an export: no key/value cache)."""
    torch.manual_seed(1)
    pad = config.pad_token_id if config.pad_token_id is not None else 0
    batch, length = SIZES["batch"], SIZES["length"]
    input_ids = torch.randint(3, config.vocab_size, (batch, length))
    attention_mask = torch.ones(batch, length, dtype=torch.long)
    if batch > 1:
        padded = max(1, length * 5 // 8)
        attention_mask[-1, padded:] = 0
        input_ids[-1, padded:] = pad
    kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
    if token_type_ids:
        kwargs["token_type_ids"] = torch.zeros(batch, length, dtype=torch.long)
    if decoder_length:
        decoder_input_ids = torch.randint(3, config.vocab_size, (batch, decoder_length))
        decoder_input_ids[:, 0] = config.decoder_start_token_id
        kwargs["decoder_input_ids"] = decoder_input_ids
    if use_cache is not None:
        kwargs["use_cache"] = use_cache
    return kwargs


def images(size, count=None):
    """`pixel_values` of `count` RGB images of size x size, as an image
    processor gives them (count: SIZES' batch unless given)."""
    torch.manual_seed(1)
    count = SIZES["batch"] if count is None else count
    return {"pixel_values": torch.randn(count, 3, size, size)}


def built(model_class, **config):
    """A diffusers model, whose constructor takes its config as keywords,
    with seeded random weights, in eval mode, its weights frozen."""
    torch.manual_seed(0)
    return model_class(**config).eval().requires_grad_(False)


def noise(*shape):
    """A noisy latent (or image, or signal) of SIZES' batch, as a diffusion
    pipeline hands its denoiser at a step: seeded Gaussian noise."""
    torch.manual_seed(1)
    return torch.randn(SIZES["batch"], *shape)
