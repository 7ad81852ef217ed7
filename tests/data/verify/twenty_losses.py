"""Twenty traced losses with tracing hazards: the verify timing fixture."""
import numpy as np
import tensorflow as tf


@tf.function
def cond_loss_0(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.10:
        loss = error * 1.0
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_1(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.15:
        loss = error * 1.1
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_2(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.20:
        loss = error * 1.2
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_3(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.25:
        loss = error * 1.3
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_4(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.30:
        loss = error * 1.4
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_5(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.35:
        loss = error * 1.5
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_6(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.40:
        loss = error * 1.6
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_7(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.45:
        loss = error * 1.7
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_8(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.50:
        loss = error * 1.8
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_9(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.55:
        loss = error * 1.9
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_10(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.60:
        loss = error * 2.0
    else:
        loss = tf.square(error)
    return loss


@tf.function
def cond_loss_11(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    if error > 0.65:
        loss = error * 2.1
    else:
        loss = tf.square(error)
    return loss


@tf.function
def noisy_loss_0(y_true, y_pred):
    noise = np.random.normal(0.0, 0.05, size=(8, 4))
    return tf.reduce_mean(tf.square(y_true - (y_pred + noise)))


@tf.function
def noisy_loss_1(y_true, y_pred):
    noise = np.random.normal(0.0, 0.10, size=(8, 4))
    return tf.reduce_mean(tf.square(y_true - (y_pred + noise)))


@tf.function
def noisy_loss_2(y_true, y_pred):
    noise = np.random.normal(0.0, 0.15, size=(8, 4))
    return tf.reduce_mean(tf.square(y_true - (y_pred + noise)))


@tf.function
def noisy_loss_3(y_true, y_pred):
    noise = np.random.normal(0.0, 0.20, size=(8, 4))
    return tf.reduce_mean(tf.square(y_true - (y_pred + noise)))


@tf.function
def logged_loss_0(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred)) * 1
    print(loss)
    return loss


@tf.function
def logged_loss_1(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred)) * 2
    print(loss)
    return loss


@tf.function
def logged_loss_2(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred)) * 3
    print(loss)
    return loss


@tf.function
def logged_loss_3(y_true, y_pred):
    loss = tf.reduce_mean(tf.square(y_true - y_pred)) * 4
    print(loss)
    return loss
