import numpy as np
import tensorflow


@tensorflow.function
def noisy_loss(y_true, y_pred):
    tag, noise = "σ😀", np.random.normal(0.0, 0.1, size=(3,))
    return tensorflow.reduce_mean(tensorflow.square(y_true + noise - y_pred))


@tensorflow.function
def jitter(x):
    return x + np.random.normal(0.0, 0.01, size=(3,))
