"""Decision Transformer: offline reinforcement learning as sequence
modelling; returns-to-go, states and actions interleaved as tokens with
per-timestep embeddings, through a GPT-2 without word embeddings."""
import torch
from transformers import DecisionTransformerConfig, DecisionTransformerModel

from _examples import frozen

config = DecisionTransformerConfig(state_dim=6, act_dim=3, hidden_size=32, n_layer=2, n_head=2,
                                   n_inner=64, max_ep_len=64, n_positions=64)
model = frozen(DecisionTransformerModel, config)


def example_kwargs():
    """Two trajectories of 8 steps (the second padded at the front after
    3, as the documentation's evaluation loop pads them): states,
    actions, rewards, returns-to-go, timesteps and the attention mask."""
    torch.manual_seed(1)
    batch, length = 2, 8
    attention_mask = torch.ones(batch, length, dtype=torch.long)
    attention_mask[1, :3] = 0
    return {"states": torch.randn(batch, length, config.state_dim),
            "actions": torch.randn(batch, length, config.act_dim),
            "rewards": torch.randn(batch, length, 1),
            "returns_to_go": torch.randn(batch, length, 1),
            "timesteps": torch.arange(length).repeat(batch, 1),
            "attention_mask": attention_mask}
