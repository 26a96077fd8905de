"""foldsweep's models as tf.keras Models (Ensemble.to_keras, docs/python.md).

The model file is read once, by foldsweep_torch (the one reader of the
architecture and the weight layouts); each of its modules becomes the Keras
layer that computes the same thing, channels last:

    a window model: input [n, W, C] (residue i's window), output [n, classes] logits
    a chain model:  input [batch, length, C] (one chain a row), output [batch, length, classes] logits

C: the 21 one-hot channels (A C D ... Y, X) unless the model reads none,
then its feature columns. Conv1d -> Conv1D (padding "same", the dilation),
Linear -> Dense (after a Permute, so that the flattening is PyTorch's
channel-major one), BatchNorm1d -> BatchNormalization (its running
statistics: inference mode), LayerNorm -> LayerNormalization, nn.GRU ->
GRU(reset_after=True) with the gates reordered (PyTorch r z n, Keras z r h),
nn.LSTM -> LSTM (one bias: b_ih + b_hh), bidirectional -> Bidirectional
(concat: forward then backward, as PyTorch), the residual adds through the
functional API; foldsweep's highway and attention as the Keras layers
Highway and RelativeAttention below.
"""

import math

import numpy as np
import tensorflow as tf
from tensorflow import keras

import foldsweep_torch as ft

nn = ft.nn


class Highway(keras.layers.Layer):
    """y = T*H + (1 - T)*x, H = act(conv_h(x)), T = sigmoid(conv_t(x))."""

    def __init__(self, channels, width, dilation, activation, **kw):
        super().__init__(**kw)
        self.h = keras.layers.Conv1D(channels, width, padding="same", dilation_rate=dilation)
        self.t = keras.layers.Conv1D(channels, width, padding="same", dilation_rate=dilation)
        self.act = activation

    def call(self, x):
        t = tf.sigmoid(self.t(x))
        h = self.h(x)
        return t * (self.act(h) if self.act is not None else h) + (1.0 - t) * x


class RelativeAttention(keras.layers.Layer):
    """foldsweep's attention over each row's whole chain [batch, length, C]:
    norm(x + out(softmax(q k^T / sqrt(key_dim) + rel[clip(j - i)]) v))."""

    def __init__(self, channels, heads, key_dim, max_distance, eps, **kw):
        super().__init__(**kw)
        self.heads, self.key_dim, self.max_distance = heads, key_dim, max_distance
        hd = heads * key_dim
        self.q, self.k, self.v = (keras.layers.Dense(hd) for _ in range(3))
        self.out = keras.layers.Dense(channels)
        self.norm = keras.layers.LayerNormalization(epsilon=eps)
        self.rel = self.add_weight(name="rel", shape=(2 * max_distance + 1, heads), initializer="zeros")

    def call(self, x):
        b, n = tf.shape(x)[0], tf.shape(x)[1]
        h, d, m = self.heads, self.key_dim, self.max_distance

        def split(t):
            return tf.transpose(tf.reshape(t, [b, n, h, d]), [0, 2, 1, 3])  # [batch, heads, length, key_dim]

        pos = tf.range(n)
        bucket = tf.clip_by_value(pos[None, :] - pos[:, None], -m, m) + m  # [i, j]: j - i clipped
        scores = tf.matmul(split(self.q(x)), split(self.k(x)), transpose_b=True) / math.sqrt(d)
        scores += tf.transpose(tf.gather(self.rel, bucket), [2, 0, 1])[None]
        ctx = tf.matmul(tf.nn.softmax(scores, axis=-1), split(self.v(x)))
        ctx = tf.reshape(tf.transpose(ctx, [0, 2, 1, 3]), [b, n, h * d])
        return self.norm(x + self.out(ctx))


def _np(t):
    return t.detach().cpu().double().numpy().astype(np.float32)


def _activation(m):
    """The Keras layer of a PyTorch activation module, or None for others."""
    if isinstance(m, nn.ReLU):
        return keras.layers.ReLU()
    if isinstance(m, nn.SiLU):
        return keras.layers.Activation("swish")
    if isinstance(m, nn.Tanh):
        return keras.layers.Activation("tanh")
    if isinstance(m, nn.ELU):
        return keras.layers.ELU(alpha=m.alpha)
    if isinstance(m, nn.LeakyReLU):
        return keras.layers.LeakyReLU(alpha=m.negative_slope)
    if isinstance(m, nn.Identity):
        return keras.layers.Activation("linear")
    return None


def _conv(m, x):
    layer = keras.layers.Conv1D(m.out_channels, m.kernel_size[0], padding="same", dilation_rate=m.dilation[0],
                                use_bias=m.bias is not None)
    y = layer(x)
    w = [_np(m.weight).transpose(2, 1, 0)] + ([_np(m.bias)] if m.bias is not None else [])
    layer.set_weights(w)
    return y


def _gru_weights(rnn, suffix):
    """Keras GRU(reset_after=True) weights of one PyTorch direction: gates
    r z n become z r h; kernels transposed; the two biases as rows."""
    wi, wh = _np(getattr(rnn, "weight_ih_l0" + suffix)), _np(getattr(rnn, "weight_hh_l0" + suffix))
    bi, bh = _np(getattr(rnn, "bias_ih_l0" + suffix)), _np(getattr(rnn, "bias_hh_l0" + suffix))
    u = rnn.hidden_size

    def zrn(a):
        r, z, n = a[:u], a[u:2 * u], a[2 * u:]
        return np.concatenate([z, r, n], axis=0)
    return [zrn(wi).T, zrn(wh).T, np.stack([zrn(bi), zrn(bh)])]


def _lstm_weights(rnn, suffix):
    """Keras LSTM weights of one PyTorch direction (gates i f g o in both)."""
    wi, wh = _np(getattr(rnn, "weight_ih_l0" + suffix)), _np(getattr(rnn, "weight_hh_l0" + suffix))
    b = _np(getattr(rnn, "bias_ih_l0" + suffix)) + _np(getattr(rnn, "bias_hh_l0" + suffix))
    return [wi.T, wh.T, b]


def _rnn(m, x):
    rnn = m.rnn
    gru = isinstance(rnn, nn.GRU)
    cell = (lambda: keras.layers.GRU(rnn.hidden_size, return_sequences=True, reset_after=True)) if gru else \
        (lambda: keras.layers.LSTM(rnn.hidden_size, return_sequences=True))
    weights = _gru_weights if gru else _lstm_weights
    if rnn.bidirectional:
        layer = keras.layers.Bidirectional(cell(), merge_mode="concat")
        y = layer(x)
        layer.set_weights(weights(rnn, "") + weights(rnn, "_reverse"))
    else:
        layer = cell()
        y = layer(x)
        layer.set_weights(weights(rnn, ""))
    return y


def _attention(m, x):
    layer = RelativeAttention(m.out.out_features, m.heads, m.key_dim, m.max_distance, m.norm.eps)
    y = layer(x)
    w = []
    for lin in (m.q, m.k, m.v, m.out):
        w += [_np(lin.weight).T, _np(lin.bias)]
    # The layer's own weights first (rel), then its sublayers' in creation order.
    order = {id(v): i for i, v in enumerate(layer.weights)}
    by_name = {}
    for sub, vals in ((layer.q, w[0:2]), (layer.k, w[2:4]), (layer.v, w[4:6]), (layer.out, w[6:8]),
                      (layer.norm, [_np(m.norm.weight), _np(m.norm.bias)])):
        for var, val in zip(sub.weights, vals):
            by_name[id(var)] = val
    by_name[id(layer.rel)] = _np(m.rel.weight)
    layer.set_weights([by_name[id(v)] for v in sorted(layer.weights, key=lambda v: order[id(v)])])
    return y


def _module(m, x, flat):
    """(output, flat) of one module on x (channels last, or flat [n, F])."""
    act = _activation(m)
    if act is not None:
        return act(x), flat
    if isinstance(m, nn.Conv1d):
        return _conv(m, x), flat
    if isinstance(m, nn.Flatten):
        return keras.layers.Flatten()(keras.layers.Permute((2, 1))(x)), True  # channel-major, as PyTorch
    if isinstance(m, nn.Unflatten):
        return keras.layers.Reshape((1, m.unflattened_size[0]))(x), False
    if isinstance(m, nn.Linear):
        layer = keras.layers.Dense(m.out_features)
        y = layer(x)
        layer.set_weights([_np(m.weight).T, _np(m.bias)])
        return y, flat
    if isinstance(m, nn.BatchNorm1d):
        layer = keras.layers.BatchNormalization(axis=-1, epsilon=m.eps)
        y = layer(x)
        layer.set_weights([_np(m.weight), _np(m.bias), _np(m.running_mean), _np(m.running_var)])
        return y, flat
    if isinstance(m, nn.LayerNorm):
        layer = keras.layers.LayerNormalization(axis=-1, epsilon=m.eps)
        y = layer(x)
        layer.set_weights([_np(m.weight), _np(m.bias)])
        return y, flat
    if isinstance(m, nn.Dropout):
        return keras.layers.Dropout(m.p)(x), flat
    if isinstance(m, ft.Highway):
        layer = Highway(m.h.out_channels, m.h.kernel_size[0], m.h.dilation[0], _activation(m.act))
        y = layer(x)
        layer.set_weights([_np(m.h.weight).transpose(2, 1, 0), _np(m.h.bias), _np(m.t.weight).transpose(2, 1, 0),
                           _np(m.t.bias)])
        return y, flat
    if isinstance(m, (ft.GRU, ft.LSTM)):
        return _rnn(m, x), flat
    if isinstance(m, ft.Attention):
        return _attention(m, x), flat
    raise ValueError(f"to_keras: no Keras layer for {type(m).__name__}")


def from_torch(model):
    """A tf.keras.Model computing what one foldsweep_torch model computes
    (its logits), channels last (this module's docstring)."""
    c = (len(ft.ALPHABET) if getattr(model, "onehot", True) else 0) + getattr(model, "features", 0)
    chain = getattr(model, "chain", False)
    inp = keras.Input(shape=(None, c) if chain else (model.window, c), name="x")
    x, flat, outs = inp, False, {}
    keep = {m.source for m in model if isinstance(m, ft.Add)}
    for i, m in enumerate(model):
        if isinstance(m, ft.Add):
            skip = outs[m.source]
            if m.proj is not None:
                if len(skip.shape) == 2:  # a dense layer's [n, C]: one position
                    skip = keras.layers.Reshape((1, skip.shape[-1]))(skip)
                skip = _conv(m.proj, skip)
            if len(skip.shape) != len(x.shape):
                skip = keras.layers.Reshape(tuple(x.shape[1:]))(skip)
            x = keras.layers.Add()([x, skip])
        else:
            x, flat = _module(m, x, flat)
        if i in keep:
            outs[i] = x
    if chain:
        name = "chain"
    else:
        name = f"window{model.window}"
    return keras.Model(inp, x, name=f"foldsweep_{name}")


def model_input(model, seq, features=None):
    """The Keras model's input for one protein (foldsweep_torch.model_input,
    channels last): [len, W, C] windows, or [1, len, C] a chain."""
    return ft.model_input(model, seq, features).numpy().transpose(0, 2, 1)
