"""The layers, one file per kind, as in ``torch/nn/modules``."""
from minigrad.nn.modules.activation import (
    CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax,
    Mish, PReLU, ReLU, ReLU6, RReLU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh,
    Tanhshrink, Threshold,
)
from minigrad.nn.modules.attention import MultiheadAttention
from minigrad.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from minigrad.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from minigrad.nn.modules.channelshuffle import ChannelShuffle
from minigrad.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from minigrad.nn.modules.distance import CosineSimilarity, PairwiseDistance
from minigrad.nn.modules.dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, FeatureAlphaDropout
from minigrad.nn.modules.flatten import Flatten, Unflatten
from minigrad.nn.modules.fold import Fold, Unfold
from minigrad.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from minigrad.nn.modules.linear import Bilinear, Identity, Linear
from minigrad.nn.modules.loss import (
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss,
    HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
    MultiMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from minigrad.nn.modules.normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from minigrad.nn.modules.padding import (
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d,
)
from minigrad.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from minigrad.nn.modules.pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
    AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d,
    MaxUnpool2d, MaxUnpool3d,
)
from minigrad.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from minigrad.nn.modules.sparse import Embedding, EmbeddingBag
from minigrad.nn.modules.transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
from minigrad.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from minigrad.nn.modules.batchnorm import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # the lazy layers
from minigrad.nn.modules.conv import (
    LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
)
from minigrad.nn.modules.instancenorm import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d
from minigrad.nn.modules.lazy import LazyModuleMixin
from minigrad.nn.modules.linear import LazyLinear

__all__ = [
    "Linear", "Identity", "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Upsample", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "Flatten", "Unflatten", "Dropout",
    "ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "LeakyReLU", "ELU", "Softplus", "Softmax", "LogSoftmax",
    "Hardtanh", "ReLU6", "SELU", "CELU", "Mish", "Softsign", "Softmin", "LogSigmoid", "Hardsigmoid", "Hardswish",
    "GLU", "Threshold", "Hardshrink", "Softshrink", "Tanhshrink", "PReLU",
    "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "InstanceNorm1d", "InstanceNorm2d", "Embedding",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss",
    "KLDivLoss", "GaussianNLLLoss", "CosineSimilarity", "PairwiseDistance",
    "ConvTranspose1d", "ConvTranspose2d", "ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d",
    "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d", "PixelShuffle",
    "PixelUnshuffle", "Unfold", "Fold", "Dropout1d", "Dropout2d", "ChannelShuffle",
    "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool3d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "BatchNorm3d", "InstanceNorm3d", "ConstantPad3d", "ZeroPad3d",
    "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d", "CTCLoss",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "Bilinear", "RMSNorm", "MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerDecoder", "Transformer",
    "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
    "MultiMarginLoss", "MultiLabelMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "PoissonNLLLoss",
    "AlphaDropout", "FeatureAlphaDropout", "RReLU", "Softmax2d", "LocalResponseNorm", "LPPool1d", "LPPool2d",
    "EmbeddingBag",
    "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyBatchNorm1d",
    "LazyBatchNorm2d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyModuleMixin",
    "LazyConv3d", "LazyConvTranspose3d", "LazyBatchNorm3d", "LazyInstanceNorm3d",
]
