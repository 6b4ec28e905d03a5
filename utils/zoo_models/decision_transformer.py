"""Decision Transformer: offline reinforcement learning as sequence
modelling; returns-to-go, states and actions interleaved as tokens with
per-timestep embeddings, through a GPT-2 without word embeddings."""
import torch
from transformers import DecisionTransformerConfig, DecisionTransformerModel

from _examples import SIZES, frozen

config = DecisionTransformerConfig(state_dim=6, act_dim=3, hidden_size=32, n_layer=2, n_head=2,
                                   n_inner=64, max_ep_len=64, n_positions=64)
model = frozen(DecisionTransformerModel, config)


def example_kwargs():
    """Two trajectories of 8 steps (the second padded at the front after
    3, as the documentation's evaluation loop pads them): states,
    actions, rewards, returns-to-go, timesteps and the attention mask."""
    torch.manual_seed(1)
    # At other SIZES, that many trajectories of that many steps, the last
    # padded at the front (keeping one step) when there are two or more.
    batch, length = SIZES["batch"], SIZES["length"]
    attention_mask = torch.ones(batch, length, dtype=torch.long)
    if batch > 1:
        attention_mask[-1, :min(3, length - 1)] = 0
    return {"states": torch.randn(batch, length, config.state_dim),
            "actions": torch.randn(batch, length, config.act_dim),
            "rewards": torch.randn(batch, length, 1),
            "returns_to_go": torch.randn(batch, length, 1),
            "timesteps": torch.arange(length).repeat(batch, 1),
            "attention_mask": attention_mask}
