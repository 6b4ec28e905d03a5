SCALE = 2


class Model:
    def forward(self x):
        return x * SCALE
