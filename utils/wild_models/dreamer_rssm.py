"""The DreamerV3 recurrent state-space model as the PyTorch port
(NM512/dreamerv3-torch) writes it: a GRU cell of its own with LayerNorm
over the fused gates, `torch.split(parts, [self._size] * 3, -1)` and an
update bias of -1, discrete stochastic states as 32 categoricals whose
logits are mixed with a uniform (`unimix`), a `OneHotDist` subclass of
`torchd.one_hot_categorical.OneHotCategorical` whose `mode()` is
`F.one_hot(argmax)` made straight-through by `+ logits - logits.detach()`,
`torchd.independent.Independent(..., 1)`, `observe` as a `static_scan`
over time swapping batch and time with `permute`, `is_first` resets by
`torch.where`-free multiplication with `(1.0 - is_first)`, and the KL
balancing loss with `torchd.kl.kl_divergence` between detached and live
posteriors and priors, clipped by `torch.clip(..., min=free)`."""
import torch
import torch.distributions as torchd
import torch.nn as nn
import torch.nn.functional as F


class OneHotDist(torchd.one_hot_categorical.OneHotCategorical):
    def __init__(self, logits=None, probs=None, unimix_ratio=0.0):
        if logits is not None and unimix_ratio > 0.0:
            probs = F.softmax(logits, dim=-1)
            probs = probs * (1.0 - unimix_ratio) + unimix_ratio / probs.shape[-1]
            logits = torch.log(probs)
            super().__init__(logits=logits, probs=None, validate_args=False)
        else:
            super().__init__(logits=logits, probs=probs, validate_args=False)

    def mode(self):
        _mode = F.one_hot(torch.argmax(super().logits, axis=-1), super().logits.shape[-1])
        return _mode.detach() + super().logits - super().logits.detach()


class GRUCell(nn.Module):
    def __init__(self, inp_size, size, norm=True, act=torch.tanh, update_bias=-1):
        super(GRUCell, self).__init__()
        self._inp_size = inp_size
        self._size = size
        self._act = act
        self._update_bias = update_bias
        self.layers = nn.Sequential()
        self.layers.add_module("GRU_linear", nn.Linear(inp_size + size, 3 * size, bias=False))
        if norm:
            self.layers.add_module("GRU_norm", nn.LayerNorm(3 * size, eps=1e-03))

    @property
    def state_size(self):
        return self._size

    def forward(self, inputs, state):
        state = state[0]  # Keras wraps the state in a list.
        parts = self.layers(torch.cat([inputs, state], -1))
        reset, cand, update = torch.split(parts, [self._size] * 3, -1)
        reset = torch.sigmoid(reset)
        cand = self._act(reset * cand)
        update = torch.sigmoid(update + self._update_bias)
        output = update * cand + (1 - update) * state
        return output, [output]


def static_scan(fn, inputs, start):
    last = start
    indices = range(inputs[0].shape[0])
    flag = True
    for index in indices:
        inp = lambda x: (_input[x] for _input in inputs)
        last = fn(last, *inp(index))
        if flag:
            if type(last) == type({}):
                outputs = {key: value.clone().unsqueeze(0) for key, value in last.items()}
            else:
                outputs = []
                for _last in last:
                    if type(_last) == type({}):
                        outputs.append({key: value.clone().unsqueeze(0) for key, value in _last.items()})
                    else:
                        outputs.append(_last.clone().unsqueeze(0))
            flag = False
        else:
            if type(last) == type({}):
                for key in last.keys():
                    outputs[key] = torch.cat([outputs[key], last[key].unsqueeze(0)], dim=0)
            else:
                for j in range(len(outputs)):
                    if type(last[j]) == type({}):
                        for key in last[j].keys():
                            outputs[j][key] = torch.cat([outputs[j][key], last[j][key].unsqueeze(0)], dim=0)
                    else:
                        outputs[j] = torch.cat([outputs[j], last[j].unsqueeze(0)], dim=0)
    if type(last) == type({}):
        outputs = [outputs]
    return outputs


class RSSM(nn.Module):
    def __init__(self, stoch=8, deter=32, hidden=32, discrete=8, num_actions=4, embed=24, unimix_ratio=0.01):
        super(RSSM, self).__init__()
        self._stoch, self._deter, self._hidden, self._discrete = stoch, deter, hidden, discrete
        self._unimix_ratio = unimix_ratio
        inp_dim = self._stoch * self._discrete + num_actions
        self._img_in_layers = nn.Sequential(nn.Linear(inp_dim, self._hidden, bias=False),
                                            nn.LayerNorm(self._hidden, eps=1e-03), nn.SiLU())
        self._cell = GRUCell(self._hidden, self._deter, norm=True)
        self._img_out_layers = nn.Sequential(nn.Linear(self._deter, self._hidden, bias=False),
                                             nn.LayerNorm(self._hidden, eps=1e-03), nn.SiLU())
        self._obs_out_layers = nn.Sequential(nn.Linear(self._deter + embed, self._hidden, bias=False),
                                             nn.LayerNorm(self._hidden, eps=1e-03), nn.SiLU())
        self._imgs_stat_layer = nn.Linear(self._hidden, self._stoch * self._discrete)
        self._obs_stat_layer = nn.Linear(self._hidden, self._stoch * self._discrete)
        self.W = nn.Parameter(torch.zeros((1, self._deter)), requires_grad=True)

    def initial(self, batch_size):
        deter = torch.zeros(batch_size, self._deter)
        state = dict(logit=torch.zeros([batch_size, self._stoch, self._discrete]),
                     stoch=torch.zeros([batch_size, self._stoch, self._discrete]), deter=deter)
        state["deter"] = torch.tanh(self.W).repeat(batch_size, 1)
        state["stoch"] = self.get_stoch(state["deter"])
        return state

    def observe(self, embed, action, is_first, state=None):
        swap = lambda x: x.permute([1, 0] + list(range(2, len(x.shape))))
        embed, action, is_first = swap(embed), swap(action), swap(is_first)
        post, prior = static_scan(lambda prev_state, prev_act, embed, is_first: self.obs_step(
            prev_state[0], prev_act, embed, is_first), (action, embed, is_first), (state, state))
        post = {k: swap(v) for k, v in post.items()}
        prior = {k: swap(v) for k, v in prior.items()}
        return post, prior

    def get_feat(self, state):
        stoch = state["stoch"]
        shape = list(stoch.shape[:-2]) + [self._stoch * self._discrete]
        stoch = stoch.reshape(shape)
        return torch.cat([stoch, state["deter"]], -1)

    def get_dist(self, state):
        logit = state["logit"]
        return torchd.independent.Independent(OneHotDist(logit, unimix_ratio=self._unimix_ratio), 1)

    def obs_step(self, prev_state, prev_action, embed, is_first, sample=False):
        if prev_state is None or torch.sum(is_first) == len(is_first):
            prev_state = self.initial(len(is_first))
            prev_action = torch.zeros((len(is_first), prev_action.shape[-1]))
        elif torch.sum(is_first) > 0:
            is_first = is_first[:, None]
            prev_action *= 1.0 - is_first
            init_state = self.initial(len(is_first))
            for key, val in prev_state.items():
                is_first_r = torch.reshape(is_first, is_first.shape + (1,) * (len(val.shape) - len(is_first.shape)))
                prev_state[key] = val * (1.0 - is_first_r) + init_state[key] * is_first_r
        prior = self.img_step(prev_state, prev_action)
        x = torch.cat([prior["deter"], embed], -1)
        x = self._obs_out_layers(x)
        stats = self._suff_stats_layer("obs", x)
        stoch = self.get_dist(stats).mode()
        post = {"stoch": stoch, "deter": prior["deter"], **stats}
        return post, prior

    def img_step(self, prev_state, prev_action, sample=False):
        prev_stoch = prev_state["stoch"]
        shape = list(prev_stoch.shape[:-2]) + [self._stoch * self._discrete]
        prev_stoch = prev_stoch.reshape(shape)
        x = torch.cat([prev_stoch, prev_action], -1)
        x = self._img_in_layers(x)
        deter = prev_state["deter"]
        x, deter = self._cell(x, [deter])
        deter = deter[0]
        x = self._img_out_layers(x)
        stats = self._suff_stats_layer("ims", x)
        stoch = self.get_dist(stats).mode()
        prior = {"stoch": stoch, "deter": deter, **stats}
        return prior

    def get_stoch(self, deter):
        x = self._img_out_layers(deter)
        stats = self._suff_stats_layer("ims", x)
        dist = self.get_dist(stats)
        return dist.mode()

    def _suff_stats_layer(self, name, x):
        if name == "ims":
            x = self._imgs_stat_layer(x)
        elif name == "obs":
            x = self._obs_stat_layer(x)
        else:
            raise NotImplementedError
        logit = x.reshape(list(x.shape[:-1]) + [self._stoch, self._discrete])
        return {"logit": logit}

    def kl_loss(self, post, prior, free, dyn_scale, rep_scale):
        kld = torchd.kl.kl_divergence
        dist = lambda x: self.get_dist(x)
        sg = lambda x: {k: v.detach() for k, v in x.items()}
        rep_loss = value = kld(dist(post) if self._discrete else dist(post)._dist,
                               dist(sg(prior)) if self._discrete else dist(sg(prior))._dist)
        dyn_loss = kld(dist(sg(post)) if self._discrete else dist(sg(post))._dist,
                       dist(prior) if self._discrete else dist(prior)._dist)
        rep_loss = torch.clip(rep_loss, min=free)
        dyn_loss = torch.clip(dyn_loss, min=free)
        loss = dyn_scale * dyn_loss + rep_scale * rep_loss
        return loss, value, dyn_loss, rep_loss


class WorldModelStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 24), nn.SiLU())
        self.dynamics = RSSM()
        self.reward = nn.Linear(8 * 8 + 32, 1)

    def forward(self, obs, action, is_first):
        embed = self.encoder(obs)
        post, prior = self.dynamics.observe(embed, action, is_first)
        kl_loss, kl_value, dyn_loss, rep_loss = self.dynamics.kl_loss(post, prior, 1.0, 0.5, 0.1)
        feat = self.dynamics.get_feat(post)
        reward = self.reward(feat).squeeze(-1)
        return kl_loss.mean() + reward.pow(2).mean(), kl_value, feat


torch.manual_seed(0)
model = WorldModelStep().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    batch, time = 3, 4
    is_first = torch.zeros(batch, time)
    is_first[:, 0] = 1.0
    action = F.one_hot(torch.randint(0, 4, (batch, time), generator=g), 4).float()
    return torch.randn(batch, time, 10, generator=g), action, is_first
