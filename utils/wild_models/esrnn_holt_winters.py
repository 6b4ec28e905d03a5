"""ES-RNN (Smyl's M4 winner) as its GPU PyTorch port writes it: a config
dict, per-series smoothing coefficients and initial seasonalities as
Parameters indexed by series ids with `torch.stack([p[idx] for idx in
idxs])`, a Holt-Winters pass in a Python loop over time appending levels,
log level differences and seasonalities to lists, the level-variability
penalty over successive log differences, the seasonality extended by
`cat` of its own slice when the horizon exceeds the season, deseasonalised
and level-normalised input/output windows built in a loop with the
one-hot category info cat'ed, `torch.cat([w.unsqueeze(0) ...])`, the
network switched with `self.train()` and `self.eval()` inside forward
around a residual stack of LSTMs with a tanh-Linear adapter, re-seasonalised
and re-levelled hold-out predictions gated by `torch.gt(x, 0).float()`, and
the pinball loss with its `tau`."""
import torch
import torch.nn as nn


class PinballLoss(nn.Module):
    def __init__(self, training_tau, output_size):
        super().__init__()
        self.training_tau = training_tau
        self.output_size = output_size

    def forward(self, predictions, actuals):
        cond = torch.zeros_like(predictions)
        loss = torch.sub(actuals, predictions)
        less_than = torch.mul(self.training_tau, torch.mul(torch.gt(loss, cond).float(), loss))
        greater_than = torch.mul(1 - self.training_tau, torch.mul(torch.lt(loss, cond).float(), loss))
        final_loss = torch.add(less_than, -greater_than)
        return torch.sum(final_loss) / self.output_size


class ResidualLSTMStack(nn.Module):
    def __init__(self, input_size, state_hsize, dilations):
        super().__init__()
        self.cells = nn.ModuleList()
        for i, _ in enumerate(dilations):
            self.cells.append(nn.LSTM(input_size if i == 0 else state_hsize, state_hsize))

    def forward(self, x):
        for layer_num, cell in enumerate(self.cells):
            residual = x
            x, _ = cell(x)
            if layer_num > 0:
                x = x + residual
        return x


class ESRNN(nn.Module):
    def __init__(self, num_series, config):
        super().__init__()
        self.config = config
        self.num_series = num_series
        self.add_nl_layer = config["add_nl_layer"]
        init_lev_sms = [nn.Parameter(torch.Tensor([0.5]), requires_grad=True) for _ in range(num_series)]
        init_seas_sms = [nn.Parameter(torch.Tensor([0.5]), requires_grad=True) for _ in range(num_series)]
        init_seasonalities = [nn.Parameter(torch.ones(config["seasonality"]) * 0.5, requires_grad=True)
                              for _ in range(num_series)]
        self.init_lev_sms = nn.ParameterList(init_lev_sms)
        self.init_seas_sms = nn.ParameterList(init_seas_sms)
        self.init_seasonalities = nn.ParameterList(init_seasonalities)
        self.nl_layer = nn.Linear(config["state_hsize"], config["state_hsize"])
        self.act = nn.Tanh()
        self.scoring = nn.Linear(config["state_hsize"], config["output_size"])
        self.logistic = nn.Sigmoid()
        self.resid_drnn = ResidualLSTMStack(config["input_size"] + config["num_of_categories"],
                                            config["state_hsize"], config["dilations"])
        self.pinball = PinballLoss(config["training_tau"], config["output_size"])

    def series_forward(self, data):
        data = self.resid_drnn(data)
        if self.add_nl_layer:
            data = self.nl_layer(data)
            data = self.act(data)
        data = self.scoring(data)
        return data

    def forward(self, train, info_cat, idxs):
        lev_sms = self.logistic(torch.stack([self.init_lev_sms[idx] for idx in idxs]).squeeze(1))
        seas_sms = self.logistic(torch.stack([self.init_seas_sms[idx] for idx in idxs]).squeeze(1))
        init_seasonalities = torch.stack([self.init_seasonalities[idx] for idx in idxs])

        seasonalities = []
        for i in range(self.config["seasonality"]):
            seasonalities.append(torch.exp(init_seasonalities[:, i]))
        seasonalities.append(torch.exp(init_seasonalities[:, 0]))

        levs = []
        log_diff_of_levels = []
        levs.append(train[:, 0] / seasonalities[0])
        for i in range(1, train.shape[1]):
            new_lev = lev_sms * (train[:, i] / seasonalities[i]) + (1 - lev_sms) * levs[i - 1]
            levs.append(new_lev)
            log_diff_of_levels.append(torch.log(new_lev / levs[i - 1]))
            seasonalities.append(seas_sms * (train[:, i] / new_lev) + (1 - seas_sms) * seasonalities[i])

        seasonalities_stacked = torch.stack(seasonalities).transpose(1, 0)
        levs_stacked = torch.stack(levs).transpose(1, 0)

        loss_mean_sq_log_diff_level = 0
        if self.config["level_variability_penalty"] > 0:
            sq_log_diff = torch.stack([(log_diff_of_levels[i] - log_diff_of_levels[i - 1]) ** 2
                                       for i in range(1, len(log_diff_of_levels))])
            loss_mean_sq_log_diff_level = torch.mean(sq_log_diff)

        if self.config["output_size"] > self.config["seasonality"]:
            start_seasonality_ext = seasonalities_stacked.shape[1] - self.config["seasonality"]
            end_seasonality_ext = start_seasonality_ext + self.config["output_size"] - self.config["seasonality"]
            seasonalities_stacked = torch.cat(
                (seasonalities_stacked, seasonalities_stacked[:, start_seasonality_ext:end_seasonality_ext]), dim=1)

        window_input_list = []
        window_output_list = []
        for i in range(self.config["input_size"] - 1, train.shape[1]):
            input_window_start = i + 1 - self.config["input_size"]
            input_window_end = i + 1
            train_deseas_window_input = (train[:, input_window_start:input_window_end]
                                         / seasonalities_stacked[:, input_window_start:input_window_end])
            train_deseas_norm_window_input = train_deseas_window_input / levs_stacked[:, i].unsqueeze(1)
            train_deseas_norm_cat_window_input = torch.cat((train_deseas_norm_window_input, info_cat), dim=1)
            window_input_list.append(train_deseas_norm_cat_window_input)

            output_window_start = i + 1
            output_window_end = i + 1 + self.config["output_size"]
            if i < train.shape[1] - self.config["output_size"]:
                train_deseas_window_output = (train[:, output_window_start:output_window_end]
                                              / seasonalities_stacked[:, output_window_start:output_window_end])
                train_deseas_norm_window_output = train_deseas_window_output / levs_stacked[:, i].unsqueeze(1)
                window_output_list.append(train_deseas_norm_window_output)

        window_input = torch.cat([i.unsqueeze(0) for i in window_input_list], dim=0)
        window_output = torch.cat([i.unsqueeze(0) for i in window_output_list], dim=0)

        self.train()
        network_pred = self.series_forward(window_input[:-self.config["output_size"]])
        network_act = window_output
        self.eval()
        network_output_non_train = self.series_forward(window_input)

        hold_out_output_reseas = network_output_non_train[-1] * seasonalities_stacked[:, -self.config["output_size"]:]
        hold_out_output_renorm = hold_out_output_reseas * levs_stacked[:, -1].unsqueeze(1)
        hold_out_pred = hold_out_output_renorm * torch.gt(hold_out_output_renorm, 0).float()

        loss = self.pinball(network_pred, network_act)
        loss = loss + self.config["level_variability_penalty"] * loss_mean_sq_log_diff_level
        return loss, hold_out_pred, levs_stacked


config = {"seasonality": 4, "input_size": 4, "output_size": 6, "state_hsize": 10, "dilations": ((1, 2), (2, 6)),
          "add_nl_layer": True, "num_of_categories": 3, "level_variability_penalty": 80, "training_tau": 0.49}
torch.manual_seed(0)
model = ESRNN(num_series=5, config=config).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(20).float()
    idxs = [4, 1, 3]
    train = 10 + torch.rand(3, 1, generator=g) * 5 + 2 * torch.sin(t * torch.pi / 2)[None] \
        + 0.2 * torch.rand(3, 20, generator=g)
    info_cat = torch.eye(3)[[0, 2, 1]]
    return train, info_cat, idxs
