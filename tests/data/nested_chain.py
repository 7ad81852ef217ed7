import tensorflow as tf


@tf.function
def forward(x):
    err = tf.reduce_mean(x)
    if err > 2.0:
        w = err * 3.0
    elif err > 1.0:
        if x.shape[0] > 1:
            w = err
        elif err > 1.5:
            w = err * 0.5
        else:
            w = -err
    else:
        print(err)
        w = err * err
    return w
